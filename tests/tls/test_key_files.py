"""Key and certificate files are written whole and never through a link; a folder for keys
is trusted only when it is the user's own and closed to others."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from k8s_wiretap.errors import UsageError
from k8s_wiretap.tls import new_authority
from k8s_wiretap.tls.pki import own_file, private_folder, write_private


def test_a_planted_symlink_is_replaced_not_written_through(tmp_path: Path) -> None:
    """A link at a key's or certificate's path, to a file of the user's: the file keeps
    what it held, and the key and certificate are files of their own (key 0600)."""
    victim = tmp_path / "the-users-file"
    victim.write_text("the user's own\n")
    keys = tmp_path / "keys"
    keys.mkdir(mode=0o700)
    for name in ("ca.crt", "ca.key", "sa.key"):
        (keys / name).symlink_to(victim)
    identity = new_authority("ca").identity
    identity.write(keys / "ca.crt", keys / "ca.key")
    write_private(keys / "sa.key", b"secret\n")
    assert victim.read_text() == "the user's own\n"
    assert (keys / "ca.crt").read_bytes() == identity.cert_pem
    assert (keys / "ca.key").read_bytes() == identity.key_pem
    assert (keys / "sa.key").read_bytes() == b"secret\n"
    for name in ("ca.crt", "ca.key", "sa.key"):
        assert stat.S_ISREG((keys / name).lstat().st_mode), name
    for name in ("ca.key", "sa.key"):
        assert stat.S_IMODE((keys / name).stat().st_mode) == 0o600, name
    assert sorted(p.name for p in keys.iterdir()) == ["ca.crt", "ca.key", "sa.key"]  # no temp


def test_a_key_written_again_replaces_the_old_one_whole(tmp_path: Path) -> None:
    key = tmp_path / "a.key"
    write_private(key, b"a much longer first key\n")
    write_private(key, b"short\n")
    assert key.read_bytes() == b"short\n"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_a_missing_folder_is_made_0700_whatever_the_umask(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "keys"
    old = os.umask(0)
    try:
        private_folder(folder)
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    private_folder(folder)  # the user's own, closed: taken as it is


@pytest.mark.parametrize("mode", [0o777, 0o750, 0o701])
def test_a_folder_others_can_enter_is_refused_in_one_line(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "keys"
    folder.mkdir()
    folder.chmod(mode)
    with pytest.raises(UsageError, match=f"mode {mode:04o} lets others in") as caught:
        private_folder(folder)
    assert "\n" not in str(caught.value) and caught.value.exit_code == 2


def test_a_symlinked_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "keys").symlink_to(real)
    with pytest.raises(UsageError, match="not a folder"):
        private_folder(tmp_path / "keys")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a folder to another user needs root")
def test_a_folder_of_another_user_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "keys"
    folder.mkdir(mode=0o700)
    os.chown(folder, 65534, 65534)
    with pytest.raises(UsageError, match="owned by user 65534, not you"):
        private_folder(folder)
    (tmp_path / "a.key").write_bytes(b"theirs\n")
    os.chown(tmp_path / "a.key", 65534, 65534)
    with pytest.raises(UsageError, match="owned by user 65534, not you"):
        own_file(tmp_path / "a.key")


def test_own_file_tells_missing_mine_and_refuses_a_symlink(tmp_path: Path) -> None:
    mine = tmp_path / "a.key"
    assert own_file(mine) is False
    mine.write_bytes(b"key\n")
    assert own_file(mine) is True
    (tmp_path / "b.key").symlink_to(mine)
    with pytest.raises(UsageError, match="not a regular file"):
        own_file(tmp_path / "b.key")


def test_the_proxys_client_ca_in_a_confdir_others_can_write_is_refused(tmp_path: Path) -> None:
    """The proxy's confdir made by someone else (0777) with their client CA in it: the
    proxy would give the kubeconfig's credentials to their clients."""
    from k8s_wiretap.proxy.clientauth import client_authority, client_ca_paths

    confdir = tmp_path / "proxy"
    confdir.mkdir()
    confdir.chmod(0o777)
    cert, key = client_ca_paths(confdir)
    new_authority("someone else's CA").identity.write(cert, key)
    with pytest.raises(UsageError, match="mode 0777 lets others in"):
        client_authority(confdir)
    confdir.chmod(0o700)
    key.unlink()
    victim = tmp_path / "the-users-file"
    victim.write_text("the user's own\n")
    key.symlink_to(victim)
    with pytest.raises(UsageError, match="not a regular file"):
        client_authority(confdir)
    assert victim.read_text() == "the user's own\n"
    key.unlink()
    cert.unlink()
    made = client_authority(tmp_path / "fresh" / "proxy")
    assert client_authority(tmp_path / "fresh" / "proxy").cert == made.cert  # made once
    assert stat.S_IMODE((tmp_path / "fresh" / "proxy").stat().st_mode) == 0o700
