"""deploy/k8s/ekb-indexed-job.yaml against its schema (docs/SCALE_OUT.md): filled in as a user
would, it is an Indexed Job whose pods each run one shard, --shard $(JOB_COMPLETION_INDEX)/N with
N its completions, writing to the store named by the secret."""
import os
import re
import unittest

import jsonschema
import yaml

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
TEMPLATE = os.path.join(ROOT, "deploy", "k8s", "ekb-indexed-job.yaml")
SCHEMA = os.path.join(ROOT, "deploy", "k8s", "ekb-indexed-job.schema.json")


def filled(values):
    with open(TEMPLATE) as f:
        text = f.read()
    # ${NAME} only, as envsubst fills them: Kubernetes' own $(VAR) references stay.
    return yaml.safe_load(re.sub(r"\$\{(\w+)\}", lambda m: values[m.group(1)], text))


class IndexedJobTemplate(unittest.TestCase):
    def setUp(self):
        with open(SCHEMA) as f:
            self.schema = yaml.safe_load(f)
        jsonschema.Draft202012Validator.check_schema(self.schema)
        self.values = {"NAME": "ekb-run-1", "SHARDS": "8", "PARALLEL": "4", "IMAGE": "registry.example/ekb:1"}

    def test_filled_template_meets_the_schema(self):
        job = filled(self.values)
        jsonschema.validate(job, self.schema)
        container = job["spec"]["template"]["spec"]["containers"][0]
        shard = container["args"][container["args"].index("--shard") + 1]
        # N of the shard is the job's completions: every index is a shard, every shard an index.
        self.assertEqual(shard, "$(JOB_COMPLETION_INDEX)/%d" % job["spec"]["completions"])
        self.assertLessEqual(job["spec"]["parallelism"], job["spec"]["completions"])
        # Every shard joins one run: its id is the job's name.
        self.assertEqual(container["args"][container["args"].index("--run") + 1], job["metadata"]["name"])

    def test_every_placeholder_is_documented(self):
        with open(TEMPLATE) as f:
            text = f.read()
        placeholders = set(re.findall(r"\$\{(\w+)\}", text.split("apiVersion:")[1]))
        self.assertEqual(placeholders, set(self.values))
        header = text.split("apiVersion:")[0]
        for name in placeholders:
            self.assertIn("${%s}" % name, header)

    def test_schema_rejects_a_job_without_its_shard(self):
        job = filled(self.values)
        args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        del args[args.index("--shard"):args.index("--shard") + 2]
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(job, self.schema)
        job = filled(self.values)
        job["spec"]["completionMode"] = "NonIndexed"
        with self.assertRaises(jsonschema.ValidationError):
            jsonschema.validate(job, self.schema)


if __name__ == "__main__":
    unittest.main()
