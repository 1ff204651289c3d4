@staticmethod
def _run_batch(conn: sqlite3.Connection, work: list) -> None:
    results = []
    conn.execute("BEGIN IMMEDIATE")
    for fn, fut in work:
        conn.execute("SAVEPOINT item")
        try:
            results.append((fut, fn(conn), None))
            conn.execute("RELEASE item")
        except BaseException as e:   # one bad write must not lose the rest of the batch
            conn.execute("ROLLBACK TO item")
            conn.execute("RELEASE item")
            results.append((fut, None, e))
    try:
        conn.execute("COMMIT")
    except BaseException as e:
        conn.execute("ROLLBACK")
        results = [(fut, None, e) for fut, _, _ in results]
    for fut, value, err in results:
        fut.set_exception(err) if err else fut.set_result(value)
