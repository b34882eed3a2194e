"""JSON-RPC as the protocol asks of malformed input, which pygls only logs: a request whose
parameters cannot be read is answered with InvalidParams, bytes that are not JSON with a Parse
error, JSON that is not a JSON-RPC message with InvalidRequest (the last two with a null id:
theirs cannot be known). The server goes on serving in every case."""

from __future__ import annotations

from pygls.exceptions import JsonRpcException, JsonRpcInvalidRequest, JsonRpcParseError
from pygls.protocol import LanguageServerProtocol


class _Malformed:
    """A request whose parameters could not be read: answered with the error."""

    def __init__(self, msg_id, error: JsonRpcException):
        self.id = msg_id
        self.error = error


class Protocol(LanguageServerProtocol):
    """pygls's protocol, answering malformed requests instead of only logging them (a client
    waiting for the answer would hang)."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if "method" in data and isinstance(data.get("id"), (int, str)):
                return _Malformed(data["id"], exc)
            raise

    def handle_message(self, message):
        if isinstance(message, _Malformed):
            self._send_response(message.id, None, message.error.to_response_error())
            return
        if not hasattr(message, "jsonrpc"):  # JSON, but not a JSON-RPC message
            msg_id = message.get("id") if isinstance(message, dict) else None
            self._send_error(msg_id if isinstance(msg_id, (int, str)) else None, JsonRpcInvalidRequest.CODE,
                             "Invalid Request: not a JSON-RPC 2.0 message")
            return
        super().handle_message(message)

    def _send_error(self, msg_id, code: int, message: str) -> None:
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def send_parse_error(self, message: str) -> None:
        """Answer a message that could not be read (its id unknown)."""
        self._send_error(None, JsonRpcParseError.CODE, f"Parse error: {message}")
