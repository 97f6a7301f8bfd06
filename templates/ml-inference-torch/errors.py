"""Errors with a code and an HTTP status; the server answers them as {"error": ...}."""


class RuntimeFault(Exception):
    """A request failure the server turns into a JSON answer with `status`."""

    def __init__(self, code, status, message):
        super().__init__(message)
        self.code = code
        self.status = status
        self.message = message


def bad_input(message):
    return RuntimeFault('bad_input', 400, message)


def not_found(message):
    return RuntimeFault('not_found', 404, message)


def not_ready(message):
    return RuntimeFault('not_ready', 503, message)


def model_error(message):
    return RuntimeFault('model_error', 500, message)
