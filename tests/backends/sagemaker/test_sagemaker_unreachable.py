"""A create call whose retries all run out is exit 3 ("could not reach the cloud") with a hint, not "refused"."""

from __future__ import annotations

import contextlib
import json
import socket
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from cloudtrain.cli import main
from cloudtrain.errors import ExitCode
from tests.fakes.aws import MotoAws

pytestmark = pytest.mark.server

CONFIG = """\
name: unreachable
backend: sagemaker
region: eu-west-1
role_arn: arn:aws:iam::123456789012:role/SageMakerRole
staging_bucket: s3://cloudtrain-unreachable
machine: {type: ml.g4dn.12xlarge}
package: {path: trainer}
"""


class _Unavailable(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        body = json.dumps({"__type": "ServiceUnavailable", "message": "fake: try later"}).encode()
        self.send_response(503)
        self.send_header("Content-Type", "application/x-amz-json-1.1")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def endpoint(kind: str):
    """An http:// endpoint on 127.0.0.1 that answers every call 503, or refuses connections."""
    if kind == "refused":
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        yield f"http://127.0.0.1:{port}"
        return
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Unavailable)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("kind", ["503", "refused"])
def test_create_whose_retries_run_out_exits_3_with_the_reattach_hint(kind, tmp_path, aws: MotoAws, monkeypatch, capsys):
    pkg = tmp_path / "trainer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "task.py").write_text("print('hi')\n")
    aws.client("s3", "eu-west-1").create_bucket(
        Bucket="cloudtrain-unreachable", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"}
    )
    config = tmp_path / "sm.yaml"
    config.write_text(textwrap.dedent(CONFIG))
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "2")  # botocore's own setting: one retry, then give up
    with endpoint(kind) as url:
        monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", url)  # S3 stays on moto: the upload works
        code = main(["submit", "--config", str(config)])
    err = capsys.readouterr().err
    assert code == ExitCode.UNREACHABLE == 3, err
    line = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(line) == 1 and "creating training job unreachable-" in line[0]
    assert ("ServiceUnavailable" in line[0]) if kind == "503" else ("cannot reach" in line[0])
    assert "refused" not in line[0] and "Traceback" not in err
    job = line[0].split("creating training job ", 1)[1].split(":", 1)[0]
    assert f"cloudtrain status {job} --backend sagemaker --region eu-west-1" in line[0]
    assert f"cloudtrain logs {job} --follow --backend sagemaker --region eu-west-1" in line[0]
