#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <malloc.h>
