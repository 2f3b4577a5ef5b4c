-- A user's language (docs/api-host.md): the host's `locale` on PUT /api/internal/users/{userId}, a BCP 47 tag in
-- canonical case (Sources/HeraldCore/LocaleTag.swift; `de`, `pt-BR`, `zh-Hant-TW`); NULL: none. A push with
-- `localized` variants gives each of the user's deliveries the variant it matches, else its default text.
ALTER TABLE users ADD COLUMN locale text;

-- New signatures (functions/put_user.sql: the locale, and the one the PUT leaves returned; functions/intake_push.sql:
-- each slot's locale): the old ones go, so no call resolves to them, and the definitions folder creates the new ones.
DROP FUNCTION IF EXISTS herald_put_user(text, text, text[], text[], text, time, time, boolean);
DROP FUNCTION IF EXISTS herald_intake_push(uuid[], integer[], integer[], text[], text[], timestamptz[], text[],
    text[], uuid[], timestamptz[], text[], text[], text[], text[], timestamptz[], integer[], integer[], text[],
    text[], integer[], text[], text[], integer[], uuid[], text[], text[], text[], text, text, integer, integer,
    text[], text[]);
