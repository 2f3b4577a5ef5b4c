-- Partner icons as the host app shows them (iOS renders a communication
-- notification's avatar only from PNG or JPEG, and mini-app logos are often SVG). The intake
-- rasterises an uploaded or fetched image to square PNGs (Sources/Icons) and stores them here; it
-- serves them at GET /icons/{miniAppId}/{size}.png and payloads point at the 256 px one.
CREATE TABLE partner_icons (
    partner_id uuid NOT NULL REFERENCES partners (id),
    size       integer NOT NULL CHECK (size IN (64, 128, 256)),
    png        bytea NOT NULL,
    -- The PNG's SHA-256 (hex): the ETag it is served with.
    sha256     text NOT NULL,
    PRIMARY KEY (partner_id, size)
);

-- When the partner's stored icon was last set; NULL when it has none (payloads then carry no
-- imageUrl). `icon_url` stays the https URL the icon was fetched from (NULL for an upload).
ALTER TABLE partners ADD COLUMN icon_updated_at timestamptz;
