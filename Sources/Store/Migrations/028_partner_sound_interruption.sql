-- What a partner's pushes ask of iOS beyond the alert, set by an admin.
--
-- sound: `aps.sound`, a file name in the host app's bundle or Library/Sounds; 'default' is the system
-- sound and NULL is silent (no `sound` key). The intake checks the name (PartnerRules.soundName); the
-- CHECK keeps a row written by hand from carrying a path.
ALTER TABLE partners ADD COLUMN sound text DEFAULT 'default'
    CONSTRAINT partners_sound_name CHECK (char_length(sound) >= 1 AND char_length(sound) <= 64
                                          AND strpos(sound, '/') = 0 AND strpos(sound, '\') = 0);

-- allow_time_sensitive: whether the partner's pushes may carry `interruptionLevel: time-sensitive`,
-- which breaks through Focus; without it such a push is refused with 403.
ALTER TABLE partners ADD COLUMN allow_time_sensitive boolean NOT NULL DEFAULT false;
