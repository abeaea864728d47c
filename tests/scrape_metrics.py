"""Scrapes a tallrow /metrics endpoint and parses it with prometheus_client's own text
parser (a third-party reader of our exposition); prints one JSON object:
{"families": {name: type}, "samples": [[name, labels, value], ...]}.
Exits 1 with the parser's complaint when the text does not parse."""

import json
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

url = sys.argv[1]
with urllib.request.urlopen(url, timeout=10) as reply:
    content_type = reply.headers.get("Content-Type", "")
    text = reply.read().decode("utf-8")
if not content_type.startswith("text/plain; version=0.0.4"):
    sys.exit("unexpected Content-Type: %r" % content_type)
families = {}
samples = []
try:
    for family in text_string_to_metric_families(text):
        families[family.name] = family.type
        for s in family.samples:
            samples.append([s.name, s.labels, s.value])
except Exception as e:  # the parser's own error says what did not parse
    sys.exit("does not parse: %s" % e)
print(json.dumps({"families": families, "samples": samples}))
