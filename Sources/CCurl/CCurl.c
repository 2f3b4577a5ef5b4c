#include "CCurl.h"

#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

CURLcode CCurl_global_init(void) {
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

const char *CCurl_default_ca_bundle(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    // cainfo exists from CURLVERSION_SEVENTH on (libcurl 7.70).
    return info != NULL && info->age >= CURLVERSION_SEVENTH ? info->cainfo : NULL;
}

CURLcode CCurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurl_easy_setopt_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode CCurl_easy_setopt_data_callback(CURL *handle, CURLoption option, curl_write_callback callback) {
    return curl_easy_setopt(handle, option, callback);
}

CURLcode CCurl_easy_setopt_opensocket_callback(CURL *handle, curl_opensocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, callback);
}

CURLMcode CCurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

curl_socket_t CCurl_socket_bad(void) {
    return CURL_SOCKET_BAD;
}

int CCurl_sockaddr_ip(const struct curl_sockaddr *address, uint8_t bytes[16]) {
    // `addr` is declared as a plain sockaddr, but libcurl stores the whole address there (an IPv6 one is
    // longer than struct sockaddr): addrlen says how much is valid.
    if (address->family == AF_INET && address->addrlen >= sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)&address->addr;
        memcpy(bytes, &in4->sin_addr, 4);
        return 4;
    }
    if (address->family == AF_INET6 && address->addrlen >= sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&address->addr;
        memcpy(bytes, &in6->sin6_addr, 16);
        return 16;
    }
    return 0;
}

curl_socket_t CCurl_open_socket(const struct curl_sockaddr *address) {
    int fd = socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    return fd >= 0 ? fd : CURL_SOCKET_BAD;
}
