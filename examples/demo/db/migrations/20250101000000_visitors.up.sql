-- The demo's dev schema: visitors and the greetings the api sends them.
CREATE TABLE visitors (
  id bigserial PRIMARY KEY,
  name text NOT NULL,
  email text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE greetings (
  id bigserial PRIMARY KEY,
  visitor_id bigint NOT NULL REFERENCES visitors(id),
  message text NOT NULL,
  sent_at timestamptz NOT NULL DEFAULT now()
);
