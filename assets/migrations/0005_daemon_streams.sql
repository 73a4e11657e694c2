-- The local tools daemon's streams (docs/reference-daemon.md). One row per connected
-- daemon (organization + name): which daemon start (instance_id) holds a stream to which server
-- process (node, and that process's HTTP URL, where requests for the daemon are routed).
-- heartbeat_at is refreshed by the holding process every heartbeat; a row whose heartbeat is
-- older than three intervals belongs to a process that died and is treated as gone.
-- Numbered 0005 so a sibling branch's 0004 can merge beside it.
CREATE TABLE daemon_streams (
    org_id TEXT NOT NULL,
    name TEXT NOT NULL,
    instance_id TEXT NOT NULL,
    node TEXT NOT NULL,
    node_url TEXT NOT NULL,
    hostname TEXT NOT NULL,
    roots TEXT NOT NULL,
    version TEXT NOT NULL,
    connected_at BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    PRIMARY KEY (org_id, name)
);
