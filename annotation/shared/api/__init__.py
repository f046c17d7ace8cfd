"""What every app's REST API shares (annotation/api/__init__.py tells the API as a whole)."""
