"""Lists come in pages: ?page=N, and ?page_size=N up to a limit that keeps one response small."""

from rest_framework import pagination


class PageNumberPagination(pagination.PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500
