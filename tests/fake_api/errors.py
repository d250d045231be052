"""The API's error body, its HTTP status per error type and default messages."""

from __future__ import annotations

from typing import Any

__all__ = ["ERROR_STATUS", "DEFAULT_ERROR_MESSAGE", "error_body"]

ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "billing_error": 402,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "timeout_error": 504,
    "overloaded_error": 529,
}

DEFAULT_ERROR_MESSAGE = {
    "invalid_request_error": "Invalid request",
    "authentication_error": "invalid x-api-key",
    "billing_error": "Your credit balance is too low to access the Anthropic API.",
    "permission_error": "Your API key does not have permission to use the specified resource.",
    "not_found_error": "Not found",
    "request_too_large": "Request exceeds the maximum allowed number of bytes.",
    "rate_limit_error": "Number of request tokens has exceeded your per-minute rate limit",
    "api_error": "Internal server error",
    "timeout_error": "Request timed out",
    "overloaded_error": "Overloaded",
}


def error_body(error_type: str, message: str, request_id: str | None = None) -> dict:
    body: dict[str, Any] = {"type": "error", "error": {"type": error_type, "message": message}}
    if request_id:
        body["request_id"] = request_id
    return body
