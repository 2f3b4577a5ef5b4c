#include "CMicroHTTPD.h"

#include <errno.h>
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
                                     int *error_number) {
    struct MHD_OptionItem options[8];
    size_t count = 0;
    if (thread_pool_size > 1) {
        options[count++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)thread_pool_size, NULL };
    }
    if (connection_limit > 0) {
        options[count++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, (intptr_t)connection_limit, NULL };
    }
    if (connection_timeout_seconds > 0) {
        options[count++] = (struct MHD_OptionItem){
            MHD_OPTION_CONNECTION_TIMEOUT, (intptr_t)connection_timeout_seconds, NULL
        };
    }
    if (bind_address != NULL) {
        options[count++] = (struct MHD_OptionItem){ MHD_OPTION_SOCK_ADDR, 0, (void *)bind_address };
    }
    if (request_completed != NULL) {
        options[count++] = (struct MHD_OptionItem){
            MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)request_completed, request_completed_cls
        };
    }
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
    struct MHD_Daemon *daemon = MHD_start_daemon(flags | MHD_USE_ERROR_LOG, port, NULL, NULL,
                                                 access_handler, access_handler_cls,
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
