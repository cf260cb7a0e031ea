"""The sandboxes: one per sample, what it may use, and how a sample ends when it is lost.

The map (a test holds it to the folder: every module is named here):

* ``spec``: the per-sample sandbox spec from the repository's ``compose.yaml`` (Docker) or
  ``values.yaml`` (Kubernetes), with the task's image, network, limits and egress applied;
* ``k8s``: the values inspect-k8s-sandbox's chart reads, with or without Cilium;
* ``faults``: a sandbox that did not start, or was lost, ends its sample as an error, scored and
  retryable (the agent and the scorer share it);
* ``signals``: SIGTERM and SIGHUP stop a run as Ctrl-C does, so its sandboxes are removed;
* ``docker``: the Docker side, the ``gaia-docker`` and ``gaia-compose`` providers (its own map).
"""
