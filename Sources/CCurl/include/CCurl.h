#ifndef CCURL_H
#define CCURL_H

// Non-variadic, prefixed wrappers around the variadic parts of libcurl (curl_easy_setopt, curl_multi_setopt,
// curl_easy_getinfo), which Swift cannot call, and the few macros and structs that do not import.

#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>

/// curl_global_init(CURL_GLOBAL_DEFAULT): call once per process before any other libcurl function.
CURLcode CCurl_global_init(void);

/// The path of the CA bundle libcurl was built to trust (curl_version_info's cainfo), or NULL.
const char *CCurl_default_ca_bundle(void);

CURLcode CCurl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode CCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value);
/// For options taking a pointer: strings (copied by libcurl), curl_slist lists, callback data.
CURLcode CCurl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value);
/// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION (the same signature).
CURLcode CCurl_easy_setopt_data_callback(CURL *handle, CURLoption option, curl_write_callback callback);
/// CURLOPT_OPENSOCKETFUNCTION.
CURLcode CCurl_easy_setopt_opensocket_callback(CURL *handle, curl_opensocket_callback callback);

CURLMcode CCurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);

/// CURL_SOCKET_BAD: what an open-socket callback returns to refuse an address.
curl_socket_t CCurl_socket_bad(void);

/// Copies the IP address of `address` (network byte order) into `bytes` and returns its length: 4 (IPv4),
/// 16 (IPv6), or 0 for any other family or a truncated address.
int CCurl_sockaddr_ip(const struct curl_sockaddr *address, uint8_t bytes[16]);

/// Opens the socket libcurl asked for (close-on-exec), or returns CURL_SOCKET_BAD.
curl_socket_t CCurl_open_socket(const struct curl_sockaddr *address);

#endif
