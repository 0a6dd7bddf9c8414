"""Credential files are recognised by name and by content (issue 41): left out of packages and of a
SageMaker script's source archive, packaged only when an --include pattern names them; a home folder is
never a package. The list is data with its sources (cloudtrain/secrets/credential_files.json)."""

from __future__ import annotations

import fnmatch
import json
import re
import shutil
import tarfile
from pathlib import Path

import pytest

from cloudtrain.backends.sagemaker.sourcedir import write_sourcedir
from cloudtrain.errors import PackagingError
from cloudtrain.packaging import build_script_sdist, build_sdist
from cloudtrain.packaging.ignore import BUILTIN_EXCLUDES, builtin_exclude
from cloudtrain.secrets import files
from tests.packaging.conftest import FIXTURES
from tests.packaging.sdist_helpers import packaged, write
from tests.secrets.credentials import FORMATS, PUTTY

AWS_CREDENTIALS = "[default]\naws_access_key_id = AKIAQYLPMN5HHHFPZAM2\naws_secret_access_key = " + (
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCY7EXAMPLEKY\n"
)
ADC = json.dumps(
    {
        "client_id": "764086051850-x.apps.googleusercontent.com",
        "client_secret": "d-FL95Q19q7MQmFpd7hHD0Ty",
        "refresh_token": "1//0gJ5e-plain-refresh-token-value",
        "type": "authorized_user",
    },
    indent=2,
)
CLIENT_SECRET = json.dumps(
    {"installed": {"client_id": "1-x.apps.googleusercontent.com", "client_secret": "GOCSPX-abc"}}
)
TOKEN_JSON = json.dumps({"token": "ya29.x", "refresh_token": "1//0gplain-refresh-token", "scopes": ["drive"]})

#: (path in the package, its content): each one a user's credential that must stay on this machine
CASES = {
    "AWS credentials at the root": ("credentials", AWS_CREDENTIALS),
    "gcloud credentials.db": ("gcloud/credentials.db", "SQLite format 3\x00"),
    "gcloud legacy adc.json": ("legacy_credentials/me@example.com/adc.json", ADC),
    "OAuth client_secret_*.json": ("client_secret_123-x.apps.googleusercontent.com.json", CLIENT_SECRET),
    "token.json": ("token.json", TOKEN_JSON),
    "user ADC under another name": ("configs/gcp.json", ADC),
    "prod.env": ("prod.env", "DB_URL=postgres://u:p@db/x\n"),
    "PuTTY key, innocent name": ("notes.txt", PUTTY),
    "_netrc": ("_netrc", "machine example.com login me password plain-netrc-pw\n"),
    "netrc, innocent name": ("hosts.cfg", "machine example.com login me password plain-netrc-pw\n"),
    "AWS keys, innocent name": ("settings.ini", AWS_CREDENTIALS),
    "Hugging Face token file": ("huggingface/token", FORMATS["Hugging Face token"][0] + "\n"),
    "a token alone in a file": ("configs/wandb.txt", FORMATS["GitHub token"][0]),
}


@pytest.mark.parametrize(("rel", "text"), CASES.values(), ids=CASES.keys())
def test_a_credential_file_is_left_out_of_the_package(mini, tmp_path, rel, text):
    write(mini, rel, text)
    built = build_sdist(mini, tmp_path / "out")
    assert f"mini_trainer/{rel}" not in packaged(built)
    with tarfile.open(built.path) as tar:  # nothing of it in the archive, under any name
        blob = b"".join(tar.extractfile(m).read() for m in tar.getmembers() if m.isfile())  # type: ignore[union-attr]
    assert text.strip().encode()[-24:] not in blob
    (shown,) = [path for path, _ in built.left_out if rel.startswith(path.removeprefix("mini_trainer/"))]
    assert shown  # listed among what was left out, so the summary says so


@pytest.mark.parametrize(("rel", "text"), CASES.values(), ids=CASES.keys())
def test_an_include_pattern_packages_it_on_purpose(mini, tmp_path, rel, text):
    write(mini, rel, text)
    built = build_sdist(mini, tmp_path / "out", include=[rel])
    assert f"mini_trainer/{rel}" in packaged(built)


def test_the_aws_credentials_file_stays_out_of_a_sagemaker_scripts_source_archive(tmp_path):
    source = tmp_path / "src" / "sm_script"
    shutil.copytree(FIXTURES / "sm_script", source)
    write(source, "credentials", AWS_CREDENTIALS)
    write(source, "gcp.json", ADC)
    package = build_script_sdist(source, tmp_path / "dist", "mnist-2.py")
    archive = write_sourcedir(package, tmp_path / "sourcedir.tar.gz", script=True)
    with tarfile.open(archive.path) as tar:
        names = tar.getnames()
        blob = b"".join(tar.extractfile(m).read() for m in tar.getmembers() if m.isfile())  # type: ignore[union-attr]
    assert "mnist-2.py" in names and "credentials" not in names and "gcp.json" not in names
    assert b"aws_secret_access_key" not in blob and b"authorized_user" not in blob


def test_a_home_folder_is_never_a_package(tmp_path):
    home = tmp_path / "me"
    for name in (".bashrc", ".profile", "__init__.py", "task.py"):
        write(home, name)
    (home / ".cache" / "huggingface").mkdir(parents=True)
    with pytest.raises(PackagingError, match=r"package path .*me is a home folder \(it holds \.bashrc, \.cache"):
        build_sdist(home, tmp_path / "out")


def test_a_project_with_one_dotfile_is_not_a_home_folder(mini, tmp_path):
    write(mini, ".profile", "x\n")  # one marker alone: a project may have one
    assert "mini_trainer/.profile" in packaged(build_sdist(mini, tmp_path / "out"))


def test_every_name_and_content_rule_has_a_source():
    doc = json.loads(Path(files.__file__).with_name("credential_files.json").read_text())
    entries = [e for group in doc["names"].values() for e in group] + doc["content"]
    assert len(entries) > 60 and all(e["source"] for e in entries)
    names = {e["pattern"] for e in doc["names"]["credential"]}
    assert {"credentials", "credentials.db", "client_secret*.json", "token.json", "_netrc", "token"} <= names


def test_including_a_file_inside_a_credential_folder_packages_that_file_alone(mini, tmp_path):
    write(mini, ".aws/credentials", AWS_CREDENTIALS)
    write(mini, ".aws/config", "[default]\nregion = us-east-1\n")
    built = build_sdist(mini, tmp_path / "out", include=[".aws/config"])
    assert {p for p in packaged(built) if "/.aws/" in p} == {"mini_trainer/.aws/config"}


def test_each_name_pattern_matches_what_fnmatch_matches():
    """Name rules are matched as plain names, suffixes and prefixes where they can be (for speed): each name
    made from each pattern of the list, its case changed or a character added or lost around it, gets the
    category of the first pattern that ``fnmatch`` matches, and no category where none does."""
    doc = json.loads((Path(files.__file__).with_name("credential_files.json")).read_text(encoding="utf-8"))
    patterns = [(category, entry["pattern"].lower()) for category, entries in doc["names"].items() for entry in entries]
    names = {"train.py", "setup.cfg", "", "x.env.example"}
    for _, pattern in patterns:
        for fill in ("", "x", "prod", "a.b", "\n"):
            made = re.sub(r"\[([^\]]*)\]", lambda m: m.group(1)[:1], pattern.replace("*", fill).replace("?", "q"))
            names |= {made, made.upper(), "pre" + made, made + ".bak", made + "\n", "." + made, made[1:], made[:-1]}
    for name in sorted(names):
        expected = next((c for c, p in patterns if fnmatch.fnmatchcase(name.lower(), p)), None)
        assert files.credential_name(name) == expected, name


def test_each_built_in_exclude_matches_what_fnmatch_matches():
    """The built-in excludes (version control, ignore files, caches) use the same fast name rules: each name
    made from them gets the first category fnmatch gives, then the credential rules' answer."""
    names = {"train.py", "model.pyc.txt", "x.pyc", "X.PYO", ".git", ".GIT", "a.git", ".venvs", "cache.env"}
    for patterns in BUILTIN_EXCLUDES.values():
        for pattern in patterns:
            made = pattern.replace("*", "m")
            names |= {made, made.upper(), "a" + made, made + "a", made[1:]}
    for name in sorted(names):
        expected = next(
            (c for c, ps in BUILTIN_EXCLUDES.items() if any(fnmatch.fnmatchcase(name.lower(), p.lower()) for p in ps)),
            None,
        )
        assert builtin_exclude(name) == (expected or files.credential_name(name)), name


def test_a_content_rules_hints_are_in_every_match_whatever_its_case():
    """A rule with hints searches only a file whose start holds one (issue 44: a dry run searched each of its
    package's files for a private key twice): every credential the rules find in the cases and the key samples,
    in upper and lower case, holds one of its rule's hints, so skipping files without one misses nothing."""
    samples = [text for _, text in CASES.values()] + [v for values in FORMATS.values() for v in values]
    samples += [s.upper() for s in samples] + [s.lower() for s in samples]
    hinted = [rule for rule in files._rules().content if rule.hints]
    assert {rule.why for rule in hinted} == {"holds a private key", "holds AWS keys", "holds netrc logins"}
    for rule in hinted:
        found = [m.group(0) for s in samples for m in rule.pattern.finditer(s.encode())]
        assert found, rule.why  # each rule meets its credential in the samples
        assert [m for m in found if not any(hint in m.lower() for hint in rule.hints)] == [], rule.why


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[default]\nAWS_SECRET_ACCESS_KEY = wJalrXUtnFEMI/K7MDENG/bPxRfiCY7EXAMPLEKY\n", "holds AWS keys"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n", "holds a private key"),
        ("PuTTY-User-Key-File-3: ssh-ed25519\n", "holds a private key"),
        ("default login me password hunter22\n", "holds netrc logins"),
        ("# no credential here: a private key is loaded elsewhere, and the password is asked for\n", None),
    ],
)
def test_a_file_is_recognised_by_content_whatever_the_case_of_its_key(text, why):
    assert files.credential_content(text.encode()) == why
