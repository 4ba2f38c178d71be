"""Research jobs: records in the database, run in-process or by Celery workers.

One store (``store.py``) and one way to run a job (``execute.py``) serve both modes, so the
embedded pool and a Celery worker differ only in who calls ``execute_job``.
"""
