#ifndef CMICROHTTPD_H
#define CMICROHTTPD_H

// Non-variadic, prefixed wrappers around the variadic parts of libmicrohttpd, which Swift cannot call.

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// What `CMicroHTTPD_start` configures; a zero limit keeps libmicrohttpd's default.
struct CMicroHTTPD_settings {
    unsigned int flags;
    uint16_t port;
    /// The address to listen on (its port included), or NULL for every IPv4 interface on `port`.
    const struct sockaddr *bind_address;
    /// Number of MHD worker threads (1 = a single internal thread).
    unsigned int thread_pool_size;
    unsigned int connection_limit;
    /// Idle timeout: a connection without traffic for this long is closed.
    unsigned int connection_timeout_seconds;
    /// Bytes of the per-connection pool that holds the request line and headers.
    size_t connection_memory_limit;
    MHD_AccessHandlerCallback access_handler;
    MHD_RequestCompletedCallback request_completed;
    MHD_NotifyConnectionCallback notify_connection;
    /// Called with the request target as libmicrohttpd read it (a C string, so cut at a raw NUL).
    void *(*uri_log)(void *cls, const char *uri, struct MHD_Connection *connection);
    /// The closure pointer of every callback above.
    void *callback_cls;
};

/// Starts a daemon. The request target is never percent-decoded by libmicrohttpd (its unescape callback is the
/// identity): the server decodes it itself, with its length, so `%00` cannot truncate it.
///
/// On failure returns NULL, stores errno (as it was right after the failure) in `*error_number` and copies
/// libmicrohttpd's start-up messages into `error_buffer` (always NUL-terminated). Messages logged by MHD
/// once the daemon runs are discarded: they are never written anywhere (they may mention client data).
struct MHD_Daemon *CMicroHTTPD_start(const struct CMicroHTTPD_settings *settings,
                                     char *error_buffer,
                                     size_t error_buffer_size,
                                     int *error_number);

/// The port the daemon's listening socket is bound to, or 0 if unknown.
uint16_t CMicroHTTPD_bound_port(struct MHD_Daemon *daemon);

/// The connection's socket, or -1.
int CMicroHTTPD_connection_fd(struct MHD_Connection *connection);

/// The socket context the notify-connection callback stored, or NULL.
void *CMicroHTTPD_socket_context(struct MHD_Connection *connection);

/// Copies the client's address (4 bytes for IPv4, 16 for IPv6; an IPv4-mapped IPv6 address as IPv4) into `out`
/// and returns its length, or 0 if unknown.
size_t CMicroHTTPD_client_address(struct MHD_Connection *connection, uint8_t out[16]);

/// Size of the request line and headers as received, or 0 if unknown.
size_t CMicroHTTPD_request_header_size(struct MHD_Connection *connection);

/// Builds the answer to a request libmicrohttpd refuses by itself (malformed, version, sizes): given the
/// connection and the status MHD chose, returns a response to send instead of MHD's HTML page (NULL keeps it).
typedef struct MHD_Response *(*CMicroHTTPD_error_hook)(struct MHD_Connection *connection, unsigned int status);

/// Installs the hook (process-wide; every daemon's connections reach their server through the socket context).
void CMicroHTTPD_set_error_hook(CMicroHTTPD_error_hook hook);

/// Whether MHD's own error pages are being replaced in this process (see CMicroHTTPD.c); for tests.
int CMicroHTTPD_error_hook_active(void);

#endif
