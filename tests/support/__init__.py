"""What the tests start and share: servers, workers, the load balancer, Redis, and helpers.

No test lives here; test files import these as `support.<name>`, and the servers run as
scripts (`python tests/support/tasks_server.py`) or as uvicorn apps from this folder.
"""
