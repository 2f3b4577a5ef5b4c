#define _GNU_SOURCE
#include "CMicroHTTPD.h"

#include <dlfcn.h>
#include <netinet/in.h>
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/// Where the logger copies messages, set only on the thread inside `CMicroHTTPD_start`.
struct CMicroHTTPD_capture {
    char *buffer;
    size_t size;
};

static _Thread_local struct CMicroHTTPD_capture *CMicroHTTPD_current_capture = NULL;

static void CMicroHTTPD_capture_logger(void *cls, const char *format, va_list ap) {
    (void)cls;
    struct CMicroHTTPD_capture *capture = CMicroHTTPD_current_capture;
    if (capture == NULL || capture->size == 0) {
        return; // a running daemon's message: dropped on purpose
    }
    size_t used = strlen(capture->buffer);
    if (used > 0 && used + 2 < capture->size) {
        memcpy(capture->buffer + used, "; ", 3);
        used += 2;
    }
    if (used + 1 >= capture->size) {
        return;
    }
    vsnprintf(capture->buffer + used, capture->size - used, format, ap);
    size_t length = strlen(capture->buffer);
    while (length > 0 && (capture->buffer[length - 1] == '\n' || capture->buffer[length - 1] == '\r')) {
        capture->buffer[--length] = '\0';
    }
}

/// libmicrohttpd's unescape callback: leave the target as sent. Decoding in place would let `%00` end the C
/// string MHD hands over; the server decodes the raw target itself, knowing its length.
static size_t CMicroHTTPD_keep_escaped(void *cls, struct MHD_Connection *connection, char *text) {
    (void)cls;
    (void)connection;
    return strlen(text);
}

/// Appends one option to `options` when `present`.
static void CMicroHTTPD_add_option(struct MHD_OptionItem *options, size_t *count, int present,
                                   enum MHD_OPTION option, intptr_t value, void *pointer) {
    if (present) {
        options[(*count)++] = (struct MHD_OptionItem){ option, value, pointer };
    }
}

struct MHD_Daemon *CMicroHTTPD_start(const struct CMicroHTTPD_settings *settings,
                                     char *error_buffer,
                                     size_t error_buffer_size,
                                     int *error_number) {
    struct MHD_OptionItem options[16];
    size_t count = 0;
    CMicroHTTPD_add_option(options, &count, settings->thread_pool_size > 1, MHD_OPTION_THREAD_POOL_SIZE,
                           settings->thread_pool_size, NULL);
    CMicroHTTPD_add_option(options, &count, settings->connection_limit > 0, MHD_OPTION_CONNECTION_LIMIT,
                           settings->connection_limit, NULL);
    CMicroHTTPD_add_option(options, &count, settings->connection_timeout_seconds > 0, MHD_OPTION_CONNECTION_TIMEOUT,
                           settings->connection_timeout_seconds, NULL);
    CMicroHTTPD_add_option(options, &count, settings->connection_memory_limit > 0, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
                           (intptr_t)settings->connection_memory_limit, NULL);
    CMicroHTTPD_add_option(options, &count, settings->bind_address != NULL, MHD_OPTION_SOCK_ADDR, 0,
                           (void *)settings->bind_address);
    CMicroHTTPD_add_option(options, &count, settings->request_completed != NULL, MHD_OPTION_NOTIFY_COMPLETED,
                           (intptr_t)settings->request_completed, settings->callback_cls);
    CMicroHTTPD_add_option(options, &count, settings->notify_connection != NULL, MHD_OPTION_NOTIFY_CONNECTION,
                           (intptr_t)settings->notify_connection, settings->callback_cls);
    CMicroHTTPD_add_option(options, &count, settings->uri_log != NULL, MHD_OPTION_URI_LOG_CALLBACK,
                           (intptr_t)settings->uri_log, settings->callback_cls);
    options[count++] = (struct MHD_OptionItem){
        MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t)CMicroHTTPD_keep_escaped, NULL
    };
    options[count++] = (struct MHD_OptionItem){
        MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)CMicroHTTPD_capture_logger, NULL
    };
    options[count++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };

    struct CMicroHTTPD_capture capture = { error_buffer, error_buffer != NULL ? error_buffer_size : 0 };
    if (capture.size > 0) {
        error_buffer[0] = '\0';
    }
    // MHD_USE_ERROR_LOG only routes messages to the capturing logger above; nothing is ever printed.
    CMicroHTTPD_current_capture = &capture;
    errno = 0;
    struct MHD_Daemon *daemon = MHD_start_daemon(settings->flags | MHD_USE_ERROR_LOG, settings->port, NULL, NULL,
                                                 settings->access_handler, settings->callback_cls,
                                                 MHD_OPTION_ARRAY, options,
                                                 MHD_OPTION_END);
    int saved_errno = errno;
    CMicroHTTPD_current_capture = NULL;
    if (error_number != NULL) {
        *error_number = daemon == NULL ? saved_errno : 0;
    }
    return daemon;
}

uint16_t CMicroHTTPD_bound_port(struct MHD_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
    return info != NULL ? info->port : 0;
}

int CMicroHTTPD_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info != NULL ? info->connect_fd : -1;
}

void *CMicroHTTPD_socket_context(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info != NULL ? info->socket_context : NULL;
}

size_t CMicroHTTPD_client_address(struct MHD_Connection *connection, uint8_t out[16]) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) {
        return 0;
    }
    if (info->client_addr->sa_family == AF_INET) {
        const struct sockaddr_in *address = (const struct sockaddr_in *)info->client_addr;
        memcpy(out, &address->sin_addr, 4);
        return 4;
    }
    if (info->client_addr->sa_family == AF_INET6) {
        const struct sockaddr_in6 *address = (const struct sockaddr_in6 *)info->client_addr;
        if (IN6_IS_ADDR_V4MAPPED(&address->sin6_addr)) {
            memcpy(out, &address->sin6_addr.s6_addr[12], 4);
            return 4;
        }
        memcpy(out, &address->sin6_addr, 16);
        return 16;
    }
    return 0;
}

size_t CMicroHTTPD_request_header_size(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(connection, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    return info != NULL ? info->header_size : 0;
}

// libmicrohttpd 0.9.75 answers some requests itself, before any callback runs (a malformed header line, an
// unsupported HTTP version, a request line or headers over its memory pool, an unparsable Content-Length),
// with a fixed HTML page. It builds that page with MHD_create_response_from_buffer and queues it with
// MHD_queue_response, both called through its PLT, so the definitions below (in the executable) are the ones
// it binds: the page is recognised when created and replaced, when queued, by what the error hook builds for
// that status (the JSON error shape). Everything else passes through to the library's own functions.

typedef struct MHD_Response *(*CMicroHTTPD_create_fn)(size_t, void *, enum MHD_ResponseMemoryMode);
typedef enum MHD_Result (*CMicroHTTPD_queue_fn)(struct MHD_Connection *, unsigned int, struct MHD_Response *);

static CMicroHTTPD_create_fn CMicroHTTPD_real_create = NULL;
static CMicroHTTPD_queue_fn CMicroHTTPD_real_queue = NULL;
static pthread_once_t CMicroHTTPD_resolve_once = PTHREAD_ONCE_INIT;
static CMicroHTTPD_error_hook CMicroHTTPD_hook = NULL;
/// The HTML error page libmicrohttpd just created on this thread, until it queues it.
static _Thread_local struct MHD_Response *CMicroHTTPD_pending_error_page = NULL;

static void CMicroHTTPD_resolve(void) {
    CMicroHTTPD_real_create = (CMicroHTTPD_create_fn)dlsym(RTLD_NEXT, "MHD_create_response_from_buffer");
    CMicroHTTPD_real_queue = (CMicroHTTPD_queue_fn)dlsym(RTLD_NEXT, "MHD_queue_response");
}

void CMicroHTTPD_set_error_hook(CMicroHTTPD_error_hook hook) {
    pthread_once(&CMicroHTTPD_resolve_once, CMicroHTTPD_resolve);
    __atomic_store_n(&CMicroHTTPD_hook, hook, __ATOMIC_RELEASE);
}

int CMicroHTTPD_error_hook_active(void) {
    void *bound = dlsym(RTLD_DEFAULT, "MHD_queue_response");
    return bound == (void *)&MHD_queue_response && bound != (void *)CMicroHTTPD_real_queue;
}

struct MHD_Response *MHD_create_response_from_buffer(size_t size, void *buffer,
                                                     enum MHD_ResponseMemoryMode mode) {
    pthread_once(&CMicroHTTPD_resolve_once, CMicroHTTPD_resolve);
    struct MHD_Response *response = CMicroHTTPD_real_create(size, buffer, mode);
    if (mode == MHD_RESPMEM_PERSISTENT && size >= 6 && buffer != NULL && memcmp(buffer, "<html>", 6) == 0) {
        CMicroHTTPD_pending_error_page = response;
    }
    return response;
}

enum MHD_Result MHD_queue_response(struct MHD_Connection *connection, unsigned int status_code,
                                   struct MHD_Response *response) {
    pthread_once(&CMicroHTTPD_resolve_once, CMicroHTTPD_resolve);
    if (response != NULL && response == CMicroHTTPD_pending_error_page) {
        CMicroHTTPD_pending_error_page = NULL;
        CMicroHTTPD_error_hook hook = __atomic_load_n(&CMicroHTTPD_hook, __ATOMIC_ACQUIRE);
        struct MHD_Response *replacement = hook != NULL ? hook(connection, status_code) : NULL;
        if (replacement != NULL) {
            enum MHD_Result result = CMicroHTTPD_real_queue(connection, status_code, replacement);
            MHD_destroy_response(replacement);
            return result;
        }
    }
    return CMicroHTTPD_real_queue(connection, status_code, response);
}
