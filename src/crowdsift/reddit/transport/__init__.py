"""HTTP transport for Reddit-shaped APIs: OAuth, rate limiting, retries, one JSON GET.

Kept apart from the filtering layer (prawcore vs praw): what changes with Reddit's protocol
lives here, what changes with our relevance rules lives elsewhere.
"""

from crowdsift.reddit.transport.auth import RedditOAuth
from crowdsift.reddit.transport.http import HttpTransport
from crowdsift.reddit.transport.ratelimit import RateLimiter
from crowdsift.reddit.transport.retry import RetryBudget, RetryPolicy

__all__ = ["HttpTransport", "RateLimiter", "RedditOAuth", "RetryBudget", "RetryPolicy"]
