"""The running service, top of the package: the route table of every api/ and dashboard/ handler, the App that answers a
Request, the start and stop of the HTTP servers, and the process's memory."""
