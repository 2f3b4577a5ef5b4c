#ifndef CMICROHTTPD_H
#define CMICROHTTPD_H

// Non-variadic, prefixed wrappers around the variadic parts of libmicrohttpd, which Swift cannot call.

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <microhttpd.h>

/// Starts a daemon with the given mode `flags` and options.
///
/// - `bind_address`: the address to listen on (its port included), or NULL for every IPv4 interface on `port`.
/// - `thread_pool_size`: number of MHD worker threads (1 = a single internal thread).
/// - `connection_limit`, `connection_timeout_seconds`: 0 keeps MHD's default.
/// - On failure returns NULL, stores errno (as it was right after the failure) in `*error_number` and copies
///   libmicrohttpd's start-up messages into `error_buffer` (always NUL-terminated). Messages logged by MHD
///   once the daemon runs are discarded: they are never written anywhere (they may mention client data).
struct MHD_Daemon *CMicroHTTPD_start(unsigned int flags,
                                     uint16_t port,
                                     const struct sockaddr *bind_address,
                                     unsigned int thread_pool_size,
                                     unsigned int connection_limit,
                                     unsigned int connection_timeout_seconds,
                                     MHD_AccessHandlerCallback access_handler,
                                     void *access_handler_cls,
                                     MHD_RequestCompletedCallback request_completed,
                                     void *request_completed_cls,
                                     char *error_buffer,
                                     size_t error_buffer_size,
                                     int *error_number);

/// The port the daemon's listening socket is bound to, or 0 if unknown.
uint16_t CMicroHTTPD_bound_port(struct MHD_Daemon *daemon);

#endif
