"""HTTP transport for Reddit-shaped APIs: OAuth, rate limiting, retries, one JSON GET.

Kept apart from the filtering layer (prawcore vs praw): what changes with Reddit's protocol
lives here, what changes with our relevance rules lives elsewhere.
"""

from crowdsift.http.auth import RedditOAuth
from crowdsift.http.ratelimit import RateLimiter
from crowdsift.http.retry import RetryBudget, RetryPolicy
from crowdsift.http.transport import HttpTransport

__all__ = ["HttpTransport", "RateLimiter", "RedditOAuth", "RetryBudget", "RetryPolicy"]
