"""HTTP serving: an app callable in-process, a thin http.server handler, one route table, the guard."""
