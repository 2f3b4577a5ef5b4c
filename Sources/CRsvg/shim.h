// librsvg, with the cairo and GIO declarations its API takes (cairo contexts, input streams, GCancellable).
#include <librsvg/rsvg.h>
#include <cairo.h>
#include <gio/gio.h>
