#include "CGdkPixbufShim.h"

static void CGdkPixbufShim_size_prepared(GdkPixbufLoader *loader, gint width, gint height, gpointer data) {
    struct CGdkPixbufShim_size_guard *guard = data;
    guard->width = width;
    guard->height = height;
    int64_t pixels = (int64_t)width * (int64_t)height;
    if (width > guard->max_side || height > guard->max_side || pixels > guard->max_pixels) {
        guard->refused = 1;
        gdk_pixbuf_loader_set_size(loader, 0, 0);
    }
}

static void CGdkPixbufShim_area_prepared(GdkPixbufLoader *loader, gpointer data) {
    (void)data;
    GdkPixbuf *pixbuf = gdk_pixbuf_loader_get_pixbuf(loader);
    if (pixbuf != NULL) {
        gdk_pixbuf_fill(pixbuf, 0);
    }
}

void CGdkPixbufShim_guard_loader(GdkPixbufLoader *loader, struct CGdkPixbufShim_size_guard *guard) {
    g_signal_connect(loader, "size-prepared", G_CALLBACK(CGdkPixbufShim_size_prepared), guard);
    g_signal_connect(loader, "area-prepared", G_CALLBACK(CGdkPixbufShim_area_prepared), NULL);
}
