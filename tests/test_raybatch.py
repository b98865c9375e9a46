"""lcread batch --ray on a local Ray started by the test (2 workers, the scripted model): results, resume, and a
worker killed mid-task."""

import json
import os

import pytest

ray = pytest.importorskip("ray")

from lcread import batch  # noqa: E402
from lcread.models.scripted import ScriptedModel  # noqa: E402
from lcread.run import Settings  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def local_ray(tmp_path_factory):
    from conftest import trusting_calibration

    reader = trusting_calibration(tmp_path_factory.mktemp("ray") / "reader.json")  # the workers' test doubles too
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"LCREAD_READER_CALIBRATION": str(reader)}})
    yield
    ray.shutdown()


def answering(marker_dir):
    """Answers each vault question from the document it was shown; a question about the doomed vault kills its
    worker the first time it is asked (a marker file remembers), as a lost machine would."""
    def brain(messages):
        text = messages[-1]["content"]
        if "doomed" in text and not os.path.exists(os.path.join(marker_dir, "killed")):
            open(os.path.join(marker_dir, "killed"), "w").close()
            os._exit(1)
        code = text.split("vault code is ")[1].split(".")[0]
        return f'answer "{code}"'
    return ScriptedModel([brain] * 200)


def write_tasks(tmp_path, names):
    lines = []
    for i, name in enumerate(names):
        doc = tmp_path / f"{name}.txt"
        doc.write_text(f"Notes on the {name} vault.\nThe vault code is {7000 + i}.\n")
        lines.append(json.dumps({"id": name, "documents": [str(doc)], "question": f"What is the {name} vault code?",
                                 "expected": str(7000 + i)}))
    path = tmp_path / "tasks.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def go(tmp_path, tasks, out, resume=False):
    return batch.run(tasks, out, resume=resume, concurrency=1, model=answering(str(tmp_path)), api_base=None,
                     settings=Settings(), trace=None, router=None, quiet=True, ray=True, workers=2)


def test_a_ray_batch_gives_the_same_results_as_a_local_one_and_uses_both_workers(tmp_path):
    tasks = write_tasks(tmp_path, ["north", "south", "east", "west", "upper", "lower"])
    rows = go(tmp_path, tasks, tmp_path / "ray.jsonl")
    local = batch.run(tasks, tmp_path / "local.jsonl", resume=False, concurrency=1, model=answering(str(tmp_path)),
                      api_base=None, settings=Settings(), trace=None, router=None, quiet=True)
    written = [json.loads(line) for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in written) == sorted(r["id"] for r in rows) and len(written) == 6
    assert {r["id"]: r["answer"] for r in written} == {r["id"]: r["answer"] for r in local}
    assert all(r["correct"] and r["verified"] for r in written)
    assert len({r["worker"] for r in written}) == 2


def test_a_ray_batch_resumes_after_the_tasks_already_done(tmp_path):
    tasks = write_tasks(tmp_path, ["north", "south", "east", "west"])
    out = tmp_path / "out.jsonl"
    out.write_text(json.dumps({"id": "north", "answer": "7000"}) + "\n" + json.dumps({"id": "south", "answer": "7001"})
                   + "\n" + '{"id": "east", "ans')  # a line cut by a kill
    rows = go(tmp_path, tasks, out, resume=True)
    assert sorted(r["id"] for r in rows) == ["east", "west"]
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == ["east", "north", "south", "west"]


def test_a_task_whose_worker_is_killed_runs_again_on_a_restarted_worker(tmp_path):
    tasks = write_tasks(tmp_path, ["north", "doomed", "south"])
    rows = go(tmp_path, tasks, tmp_path / "out.jsonl")
    by_id = {r["id"]: r for r in rows}
    assert os.path.exists(tmp_path / "killed")  # the worker did die once
    assert by_id["doomed"]["answer"] == "7001" and by_id["doomed"]["error"] is None
    assert all(r["correct"] for r in rows)


def test_without_ray_installed_the_message_says_how_to_install_it(tmp_path, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_ray(name, *args, **kw):
        if name == "ray":
            raise ImportError("no ray")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_ray)
    from lcread.errors import LcreadError

    with pytest.raises(LcreadError, match=r"pip install 'lcread\[ray\]'"):
        batch.run(tmp_path / "none.jsonl", tmp_path / "o.jsonl", resume=False, concurrency=1, model=None,
                  api_base=None, settings=Settings(), trace=None, router=None, quiet=True, ray=True)
