"""mini-swe-agent (https://mini-swe-agent.com) as the peer row of `agent eval`, on the same model and endpoint.

Install it in its own environment, not as a dependency of ours:
    python3 -m venv ~/peer && ~/peer/bin/pip install mini-swe-agent
(in your home folder: the sandbox gives each task its own /tmp, where a venv would not be seen)
Then, with a llama-server running (e.g. `agent serve --profile qwen-cpu --background`):
    agent eval run humaneval-40 --mode command --endpoint http://127.0.0.1:PORT/v1 \\
        --agent-command "~/peer/bin/python examples/eval/peer_mini_swe_agent.py"
It runs in the task's folder under our sandbox; settings come from EVAL_* variables (agent/evals/peer.py).
Its stock text-based configuration (mini_textbased.yaml: one bash block per reply) fits a local model."""

import json
import os
from pathlib import Path

# litellm fetches a price list from GitHub at import (three tries, ~7 s, failing offline); a local model has
# no price, so its bundled copy does
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import yaml
from minisweagent import config as configs
from minisweagent.agents.default import DefaultAgent
from minisweagent.environments.local import LocalEnvironment
from minisweagent.models.litellm_textbased_model import LitellmTextbasedModel

settings = yaml.safe_load((Path(configs.__file__).parent / "mini_textbased.yaml").read_text())
model = LitellmTextbasedModel(
    model_name="openai/local",
    model_kwargs={
        "api_base": os.environ["EVAL_ENDPOINT"],
        "api_key": "none",
        "temperature": float(os.environ["EVAL_TEMPERATURE"]),
        "seed": int(os.environ["EVAL_SEED"]),
        "max_tokens": 2048,
    },
    cost_tracking="ignore_errors",
)
environment = LocalEnvironment(**{**settings.get("environment", {}), "cwd": os.getcwd()})
agent_settings = {**settings["agent"], "step_limit": int(os.environ["EVAL_MAX_STEPS"]), "cost_limit": 0}
agent = DefaultAgent(model, environment, **agent_settings)
result = agent.run(os.environ["EVAL_TASK"])
status = "finished" if result.get("exit_status") == "Submitted" else result.get("exit_status")
print(json.dumps({"status": status, "steps": agent.n_calls}))
