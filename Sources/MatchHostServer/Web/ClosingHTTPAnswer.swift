import NIOCore

/// A whole HTTP/1.1 answer in plain text that a port writes to a client it will not serve, just
/// before it closes the connection (`Connection: close`): the web port's 503 over its limit, and
/// the 400 of an HTTPS-only port (web or admin) to a client speaking plain HTTP.
public enum ClosingHTTPAnswer {
    /// The answer's bytes: `status` (such as "400 Bad Request") and `reason`, the body a
    /// browser shows, ending with a newline.
    public static func plainText(status: String, reason: String) -> ByteBuffer {
        ByteBuffer(
            string: "HTTP/1.1 \(status)\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(reason.utf8.count)\r\nConnection: close\r\n\r\n\(reason)"
        )
    }
}
