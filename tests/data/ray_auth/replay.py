"""The suite's sequence that cancelled every lane of test_ray_cluster, in one process: a local Ray session (as
test_worker_isolation's "ray" mode starts one), its saved environment restored afterwards (as that fixture does),
then a cluster made by ray.cluster_utils (as test_ray_cluster's fixture) and one actor on it. Prints the mode Ray
left in the environment after the first session and whether the actor ran."""

import os

import ray
from ray.cluster_utils import Cluster

saved = dict(os.environ)
ray.init(address="local", num_cpus=1, include_dashboard=False, log_to_driver=False)
ray.shutdown()
print("mode after the local session:", os.environ.get("RAY_AUTH_MODE"), flush=True)
os.environ.clear()
os.environ.update(saved)

cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
ray.init(address=cluster.address, log_to_driver=False)


@ray.remote(num_cpus=1)
class Lane:
    def ping(self) -> int:
        return 1


try:
    print("actor:", "ran" if ray.get(Lane.remote().ping.remote(), timeout=90) == 1 else "wrong", flush=True)
except Exception as exc:  # noqa: BLE001 - what the test reads
    print("actor: failed", type(exc).__name__, flush=True)
finally:
    ray.shutdown()
    cluster.shutdown()
