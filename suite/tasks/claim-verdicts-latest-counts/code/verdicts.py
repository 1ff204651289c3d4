def add(self, call: str, useful: bool, note: str | None, real: list, false: list) -> dict:
    created = time.time()

    def write(conn):
        conn.execute("UPDATE verdicts SET current = 0 WHERE call = ? AND current = 1", (call,))
        cur = conn.execute("INSERT INTO verdicts (call, useful, note, real, false, created, current) "
                           "VALUES (?, ?, ?, ?, ?, ?, 1)",
                           (call, int(useful), note, json.dumps(real), json.dumps(false), created))
        return cur.lastrowid
    vid = self.db.call(write)
    return {"id": vid, "call": call, "useful": useful, "note": note, "real": real, "false": false,
            "created": created}
