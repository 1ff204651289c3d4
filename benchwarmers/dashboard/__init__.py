"""The dashboard: server-rendered pages on the service's own port, each built from one dict also served as JSON.

A page reads the bench with the functions the admin API serves (api/, a handler being its dict function wrapped
in a response) and changes it through the admin API called in-process as the page's own request (apicall.py),
so the dashboard and the CLI can do the same things. Adding a page:

1. One module under dashboard/pages/ meeting PageContract (contract.py): data(req, bench) -> dict, what the
   page shows (`bench` annotated with a Protocol naming the parts of the Bench it reads, as every handler's is:
   tests/test_parts.py checks it); render(d, frame) -> (title, Html), the body made with markup.html (values
   escaped unless marked; frame: the CSRF token, notes left by the last form, what the user typed); ACTIONS =
   [(path, function, back)], the forms it posts (function(req, bench, form) returns a web.Done and runs behind
   the CSRF check; `bench: object` when it changes the bench only through the admin API); SCRIPTS, extra static
   files; redirect(d), a path to send the browser to instead (`stays` for none).
2. One line in PAGES in dashboard/routes.py: Page(path, module, nav="Label") (nav only for the top bar).

The page is then served at its path and as JSON at path + ".json"; its actions are POST routes. Where a page
needs data no API route gives, add the route to the admin API (benchwarmers/api/) and read it from there.
Two route modules beside the pages reach the bench directly, each saying why in its docstring: askstream.py
(a column per seat as it finishes) and signin.py (a provider's callback arrives without the session cookie).
"""
