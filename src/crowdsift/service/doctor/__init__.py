"""``crowdsift doctor``: is each thing a run depends on working, and if not, what to do."""

from crowdsift.service.doctor.context import DoctorContext
from crowdsift.service.doctor.models import Check, DoctorReport, mask_secret
from crowdsift.service.doctor.runner import CheckSpec, assess, default_path, run_doctor

__all__ = [
    "Check",
    "CheckSpec",
    "DoctorContext",
    "DoctorReport",
    "assess",
    "default_path",
    "mask_secret",
    "run_doctor",
]
