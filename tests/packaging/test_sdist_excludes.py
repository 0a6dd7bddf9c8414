"""What never goes into a package, what ignore files leave out, and how symlinks are treated."""

from __future__ import annotations

import os

import pytest

from cloudtrain.errors import PackagingError
from cloudtrain.packaging import build_sdist
from cloudtrain.packaging.ignore import builtin_exclude, is_ignored, parse_ignore_lines
from tests.packaging.sdist_helpers import member_bytes, packaged, write

KEPT = {
    "mini_trainer/__init__.py",
    "mini_trainer/task.py",
    "mini_trainer/model.py",
    "mini_trainer/configs/default.json",
    "mini_trainer/requirements.txt",
}

BUILTIN = {
    "version control": [".git/HEAD", ".git/objects/ab/cdef", "sub/.hg/store", ".svn/entries"],
    "cache": [
        "__pycache__/task.cpython-311.pyc",
        "model.pyc",
        "old.pyo",
        "sub/__pycache__/x.py",
        ".DS_Store",
        ".pytest_cache/v",
        ".ipynb_checkpoints/nb.ipynb",
        ".venv/bin/python",
    ],
    "environment file": [".env.local", "configs/.env.production", "configs/.env", "sub/.env/lib.py"],
    "credential": [
        "server.pem",
        "tls.key",
        "cert.p12",
        "id_rsa",
        "id_rsa.pub",
        "id_ed25519",
        "credentials.json",
        "my-service-account-123.json",
        "keys/prod_service_account.json",
        ".aws/credentials",
        ".netrc",
        "configs/KEY.PEM",
        ".ssh/config",
    ],
}


@pytest.mark.parametrize("category", sorted(BUILTIN))
def test_builtin_excludes_leave_out_each_category(mini, tmp_path, category):
    for rel in BUILTIN[category]:
        write(mini, rel)
    built = build_sdist(mini, tmp_path / "out")
    assert packaged(built) == KEPT
    credential_warnings = [w for w in built.warnings if "credential" in w]
    if category == "credential":
        (warning,) = credential_warnings
        assert "mini_trainer/server.pem" in warning and "mini_trainer/.aws" in warning
        assert "mini_trainer/configs/KEY.PEM" in warning
    else:
        assert credential_warnings == []


def test_builtin_excludes_cannot_be_reincluded(mini, tmp_path):
    write(mini, "server.pem")
    write(mini, ".env")
    write(mini, ".cloudtrainignore", "!server.pem\n!.env\n")
    assert packaged(build_sdist(mini, tmp_path / "out")) == KEPT


def test_lookalikes_of_excluded_names_are_kept(mini, tmp_path):
    for rel in ["environment.py", "keys.py", "pemfile.txt", "git_utils.py", "cache/x.py", "env/a.py"]:
        write(mini, rel)
    got = packaged(build_sdist(mini, tmp_path / "out"))
    assert {"mini_trainer/keys.py", "mini_trainer/env/a.py", "mini_trainer/cache/x.py"} <= got
    assert len(got) == len(KEPT) + 6


def test_gitignore_and_cloudtrainignore_with_negation(mini, tmp_path):
    write(mini, ".gitignore", "# data stays local\ndata/\n*.ckpt\n!best.ckpt\n/notes.md\n")
    write(mini, ".cloudtrainignore", "*.csv\n!labels.csv\n!keep.ckpt\n")
    for rel in [
        "data/train.tfrecord",
        "a.ckpt",
        "best.ckpt",
        "keep.ckpt",
        "sub/c.ckpt",
        "notes.md",
        "sub/notes.md",
        "x.csv",
        "labels.csv",
        "sub/labels.csv",
    ]:
        write(mini, rel)
    got = packaged(build_sdist(mini, tmp_path / "out")) - KEPT
    assert got == {
        "mini_trainer/best.ckpt",
        "mini_trainer/keep.ckpt",
        "mini_trainer/sub/notes.md",
        "mini_trainer/labels.csv",
        "mini_trainer/sub/labels.csv",
    }


def test_nested_ignore_file_applies_below_its_folder_and_wins(mini, tmp_path):
    write(mini, ".cloudtrainignore", "*.bin\n")
    write(mini, "assets/.gitignore", "!small.bin\n/local.txt\n")
    for rel in [
        "big.bin",
        "small.bin",
        "assets/small.bin",
        "assets/big.bin",
        "assets/local.txt",
        "assets/deeper/local.txt",
        "local.txt",
    ]:
        write(mini, rel)
    got = packaged(build_sdist(mini, tmp_path / "out")) - KEPT
    assert got == {"mini_trainer/assets/small.bin", "mini_trainer/assets/deeper/local.txt", "mini_trainer/local.txt"}


def test_file_below_an_ignored_folder_cannot_be_reincluded(mini, tmp_path):
    write(mini, ".cloudtrainignore", "logs/\n!logs/keep.txt\n")
    write(mini, "logs/keep.txt")
    assert packaged(build_sdist(mini, tmp_path / "out")) == KEPT


def test_ignore_file_of_the_parent_folder_is_not_read(mini, tmp_path):
    write(mini.parent, ".gitignore", "*.py\n")
    write(mini.parent, ".cloudtrainignore", "configs/\n")
    assert packaged(build_sdist(mini, tmp_path / "out")) == KEPT


def test_ignoring_a_change_keeps_the_hash(mini, tmp_path):
    write(mini, ".cloudtrainignore", "scratch/\n")
    first = build_sdist(mini, tmp_path / "out")
    write(mini, "scratch/experiment.py", "print(1)\n")
    write(mini, "__pycache__/task.cpython-311.pyc", "junk")
    assert build_sdist(mini, tmp_path / "out").sha256 == first.sha256


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "ignored"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/er/a.log", False, True),
        ("*.log", "a.log.txt", False, False),
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "sub/top.txt", False, False),
        ("sub/top.txt", "sub/top.txt", False, True),
        ("sub/top.txt", "x/sub/top.txt", False, False),
        ("build/", "build", True, True),
        ("build/", "build", False, False),
        ("a?c", "abc", False, True),
        ("a?c", "a/c", False, False),
        ("[bc]at", "cat", False, True),
        ("[!bc]at", "cat", False, False),
        ("[!bc]at", "rat", False, True),
        ("**/deep", "x/y/deep", True, True),
        ("**/deep", "deep", True, True),
        ("docs/**/*.tmp", "docs/a.tmp", False, True),
        ("docs/**/*.tmp", "docs/x/y/a.tmp", False, True),
        ("data/**", "data/x", False, True),
        ("data/**", "data", True, False),
        ("a*b", "a/b", False, False),
        ("\\#hash", "#hash", False, True),
        ("\\!bang", "!bang", False, True),
        ("trailing.txt   ", "trailing.txt", False, True),
    ],
)
def test_ignore_pattern_semantics_match_git(pattern, path, is_dir, ignored):
    rules = parse_ignore_lines([pattern])
    assert (is_ignored(rules, path, is_dir) is not None) is ignored


def test_last_matching_rule_wins_and_comments_are_skipped():
    rules = parse_ignore_lines(["# *.py", "", "*.py", "!keep.py", "keep.py"], source=".gitignore")
    assert [r.source for r in rules] == [".gitignore:3", ".gitignore:4", ".gitignore:5"]
    last = is_ignored(rules, "keep.py", False)
    assert last is not None and last.source == ".gitignore:5"
    assert is_ignored(rules[:2], "keep.py", False) is None
    assert is_ignored(rules, "other.txt", False) is None


def test_builtin_exclude_categories():
    assert builtin_exclude("__pycache__") == "cache"
    assert builtin_exclude("Credentials.JSON") == "credential"
    assert builtin_exclude(".env.staging") == "environment file"
    assert builtin_exclude("task.py") is None


# Symlinks: followed inside the package, refused when they leave it.


def test_symlink_inside_the_package_is_packaged_as_a_copy(mini, tmp_path):
    os.symlink("configs/default.json", mini / "config.json")
    os.symlink("configs", mini / "conf")
    built = build_sdist(mini, tmp_path / "out")
    assert packaged(built) - KEPT == {"mini_trainer/config.json", "mini_trainer/conf/default.json"}
    import tarfile

    with tarfile.open(built.path) as tar:
        member = tar.getmember("mini_trainer-0.0.0/mini_trainer/config.json")
        assert member.isfile() and member_bytes(tar, member) == b'{"lr": 0.1}\n'


def test_symlink_escaping_the_package_is_refused(mini, tmp_path):
    secret = write(tmp_path, "outside/secret.txt")
    os.symlink(secret, mini / "data.txt")
    with pytest.raises(
        PackagingError,
        match=r"symlink .*mini_trainer/data.txt points outside the package, to .*outside/secret.txt"
        r" — .*\.cloudtrainignore",
    ):
        build_sdist(mini, tmp_path / "out")
    write(mini, ".cloudtrainignore", "data.txt\n")
    assert packaged(build_sdist(mini, tmp_path / "out")) == KEPT


def test_symlink_escaping_with_dotdot_is_refused(mini, tmp_path):
    os.symlink("../../", mini / "up")
    with pytest.raises(PackagingError, match="points outside the package"):
        build_sdist(mini, tmp_path / "out")


def test_dangling_symlink_is_refused(mini, tmp_path):
    os.symlink("missing.py", mini / "gone.py")
    with pytest.raises(PackagingError, match=r"gone.py points to .*missing.py, which does not exist"):
        build_sdist(mini, tmp_path / "out")


def test_symlink_loop_is_refused(mini, tmp_path):
    os.symlink("..", mini / "configs" / "loop")
    with pytest.raises(
        PackagingError,
        match=r"configs/loop points to a folder that contains it \(a loop: configs/loop -> \./ -> … -> configs/loop\)",
    ):
        build_sdist(mini, tmp_path / "out")


def test_symlink_cannot_bring_in_an_excluded_file(mini, tmp_path):
    write(mini, "keys/prod.pem")
    write(mini, "scratch/big.bin")
    write(mini, ".cloudtrainignore", "scratch/\n")
    os.symlink("keys/prod.pem", mini / "innocent.txt")
    os.symlink("scratch/big.bin", mini / "weights.bin")
    built = build_sdist(mini, tmp_path / "out")
    assert packaged(built) == KEPT
    assert any("mini_trainer/innocent.txt" in w for w in built.warnings)


def test_special_files_are_refused(mini, tmp_path):
    os.mkfifo(mini / "pipe")
    with pytest.raises(PackagingError, match=r"pipe is not a regular file"):
        build_sdist(mini, tmp_path / "out")


#: Credential files users keep beside their code (issue #26), as they name them.
CREDENTIAL_FILES = [
    ".npmrc",
    ".pgpass",
    ".htpasswd",
    "gcp-key.json",
    "kubeconfig",
    "prod.tfvars",
    "secrets.yaml",
    "token.txt",
    "keys/deploy_key",
    ".kube/config",
    ".pypirc",
    ".my.cnf",
    ".docker/config.json",
    "terraform.tfstate",
    ".vault-token",
    ".git-credentials",
    ".s3cfg",
    ".yarnrc.yml",
    ".dockercfg",
]


def test_credential_files_of_every_kind_are_left_out_and_named(mini, tmp_path):
    for rel in CREDENTIAL_FILES:
        write(mini, rel)
    built = build_sdist(mini, tmp_path / "out")
    assert packaged(built) == KEPT
    (warning,) = [w for w in built.warnings if "credential" in w]
    tops = {rel.split("/")[0] for rel in CREDENTIAL_FILES}
    for top in tops:
        assert f"mini_trainer/{top}" in warning
    named = {path for path, _ in built.left_out}
    for rel in CREDENTIAL_FILES:  # the file, or the credential folder holding it
        assert any(f"mini_trainer/{rel}" == p or f"mini_trainer/{rel}".startswith(p + "/") for p in named), rel


def test_envrc_is_left_out_as_an_environment_file(mini, tmp_path):
    write(mini, ".envrc", "export WANDB_API_KEY=abc\n")
    built = build_sdist(mini, tmp_path / "out")
    assert packaged(built) == KEPT
    assert ("mini_trainer/.envrc", "environment file") in built.left_out


SERVICE_ACCOUNT_KEY = (
    '{\n  "type": "service_account",\n  "project_id": "p",\n  "private_key_id": "1",\n'
    '  "private_key": "-----BEGIN PRIVATE KEY-----\\nMIIE\\n-----END PRIVATE KEY-----\\n"\n}\n'
)


@pytest.mark.parametrize(
    ("name", "content", "why"),
    [
        (
            "configs/model.json",
            SERVICE_ACCOUNT_KEY.replace("-----BEGIN PRIVATE KEY-----", "xx"),
            "holds a service-account key",
        ),
        (
            "notes.txt",
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----\n",
            "holds a private key",
        ),
        ("util/cert_data.py", 'KEY = """-----BEGIN RSA PRIVATE KEY-----\nMII\n"""\n', "holds a private key"),
        ("configs/config.json", '{"auths": {"ghcr.io": {"auth": "dXNlcjpwYXNz"}}}\n', "holds registry logins"),
    ],
)
def test_a_file_holding_a_credential_is_left_out_whatever_its_name(mini, tmp_path, name, content, why):
    write(mini, name, content)
    built = build_sdist(mini, tmp_path / "out")
    assert packaged(built) == KEPT
    assert (f"mini_trainer/{name}", why) in built.left_out
    (warning,) = [w for w in built.warnings if "credential" in w]
    assert f"mini_trainer/{name} ({why})" in warning


def test_files_that_only_mention_keys_are_kept(mini, tmp_path):
    write(mini, "configs/model.json", '{"type": "dense", "key": "value", "auths": []}\n')
    write(mini, "keys.py", "PRIVATE_KEY_ENV = 'PRIVATE_KEY'\n")
    write(mini, "public.txt", "-----BEGIN PUBLIC KEY-----\nMII\n-----END PUBLIC KEY-----\n")
    got = packaged(build_sdist(mini, tmp_path / "out"))
    assert {"mini_trainer/configs/model.json", "mini_trainer/keys.py", "mini_trainer/public.txt"} <= got


def test_include_packages_a_credential_like_file_with_one_warning(mini, tmp_path):
    write(mini, "gcp-key.json", SERVICE_ACCOUNT_KEY)
    write(mini, "fixtures/test.pem", "-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n")
    write(mini, "server.pem")
    built = build_sdist(mini, tmp_path / "out", include=["gcp-key.json", "fixtures/*.pem"])
    assert packaged(built) == KEPT | {"mini_trainer/gcp-key.json", "mini_trainer/fixtures/test.pem"}
    (warning,) = [w for w in built.warnings if w.startswith("packaged credential-like files")]
    assert warning.startswith(
        "packaged credential-like files: mini_trainer/fixtures/test.pem (--include "
        "fixtures/*.pem), mini_trainer/gcp-key.json (--include gcp-key.json) — "
    )
    assert ("mini_trainer/server.pem", "credential-like") in built.left_out  # not named: still left out
