import CGdkPixbuf

/// GErrors are freed where they are read, and their text goes nowhere: a decoder's message can quote internals
/// (paths, library details) and is not the uploader's business. Callers map failures to `IconError`s.
enum GLibErrors {
    /// Frees the error if one was set; returns whether one was.
    @discardableResult
    static func discard(_ error: inout UnsafeMutablePointer<GError>?) -> Bool {
        guard error != nil else {
            return false
        }
        g_clear_error(&error)
        return true
    }
}
