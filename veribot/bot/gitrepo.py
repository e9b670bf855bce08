"""Read a git range: resolve revisions, list the changed files with renames, read both blobs.

Errors (all :class:`GitRepoError`, each with a sentence a person can act on):

- :class:`NotARepositoryError`: the path is not inside a git working tree;
- :class:`UnknownRevisionError`: a revision does not name a commit;
- :class:`NoDefaultBranchError`: no base was given and none could be chosen.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import git
from unidiff.patch import PatchSet

from veribot.checks.project import package as packages
from veribot.checks.project.package import Package, PairContext, SourceFile
from veribot.checks.project.units import FileChange, is_test_path
from veribot.checks.search import harvest

logger = logging.getLogger(__name__)

# Candidates for "the default branch", in order, when origin/HEAD is not set.
_DEFAULT_BRANCHES = ("main", "master", "origin/main", "origin/master")


class GitRepoError(Exception):
    """A problem with the repository or the revisions a person asked for."""


class NotARepositoryError(GitRepoError):
    """The path is not (inside) a git working tree."""


class UnknownRevisionError(GitRepoError):
    """A revision does not name a commit in the repository."""


class NoDefaultBranchError(GitRepoError):
    """No ``--base`` was given and no default branch could be found."""


@dataclass(frozen=True)
class ChangeSet:
    """The files changed between two commits, with both versions of each."""

    root: Path  # the working tree's top folder; file paths are relative to it
    base: str  # full commit id
    head: str
    base_label: str  # what the person asked for (or how the base was chosen)
    head_label: str
    files: tuple[FileChange, ...]
    subjects: tuple[str, ...] = ()  # of the commits in base..head, newest first (at most 200)


MAX_SUBJECTS = 200  # commit subjects read to see whether a change declares its intent


def open_repo(path: Path) -> git.Repo:
    """Open the repository that contains ``path``."""
    try:
        return git.Repo(path, search_parent_directories=True)
    except git.NoSuchPathError as exc:
        raise NotARepositoryError(f"{path} does not exist.") from exc
    except git.InvalidGitRepositoryError as exc:
        raise NotARepositoryError(
            f"{path} is not a git repository (or inside one); pass --repo PATH."
        ) from exc


def resolve(repo: git.Repo, rev: str) -> str:
    """The full commit id that ``rev`` names."""
    try:
        return str(repo.commit(rev).hexsha)
    except (git.BadName, git.BadObject, ValueError, IndexError, TypeError) as exc:
        raise UnknownRevisionError(f"unknown revision '{rev}'.") from exc


def default_branch(repo: git.Repo) -> str:
    """The default branch: origin/HEAD's target, else main or master."""
    try:
        target = repo.git.symbolic_ref("--quiet", "--short", "refs/remotes/origin/HEAD")
    except git.GitCommandError:
        target = ""
    if target:
        return str(target).strip()
    for name in _DEFAULT_BRANCHES:
        try:
            repo.commit(name)
        except (git.BadName, git.BadObject, ValueError):
            continue
        return name
    raise NoDefaultBranchError(
        "no default branch found (no origin/HEAD, main or master); pass --base REV."
    )


def merge_base(repo: git.Repo, head: str) -> tuple[str, str]:
    """The merge base of ``head`` with the default branch, and a label saying so."""
    branch = default_branch(repo)
    bases = repo.merge_base(branch, head)
    if not bases or bases[0] is None:
        raise NoDefaultBranchError(
            f"{branch} and the head have no common ancestor; pass --base REV."
        )
    return str(bases[0].hexsha), f"merge-base({branch}, HEAD)"


def read_changes(path: Path, base: str | None, head: str = "HEAD") -> ChangeSet:
    """Every file changed from ``base`` to ``head`` (renames detected), with both versions.

    ``base=None`` means the merge base of ``head`` with the default branch.
    """
    repo = open_repo(path)
    if repo.working_tree_dir is None:
        raise NotARepositoryError(f"{path} is a bare repository; review needs a working tree.")
    root = Path(repo.working_tree_dir)
    head_sha = resolve(repo, head)
    if base is None:
        base_sha, base_label = merge_base(repo, head_sha)
    else:
        base_sha, base_label = resolve(repo, base), base
    logger.debug("reviewing %s: %s..%s", root, base_sha, head_sha)
    files = _changed_files(repo, base_sha, head_sha)
    subjects = tuple(str(c.summary) for c in repo.iter_commits(f"{base_sha}..{head_sha}",
                                                               max_count=MAX_SUBJECTS))
    return ChangeSet(root, base_sha, head_sha, base_label, head, files, subjects)


def _changed_files(repo: git.Repo, base: str, head: str) -> tuple[FileChange, ...]:
    raw = repo.git.execute(
        [
            "git",
            "-c",
            "core.quotepath=false",
            "diff",
            "--find-renames",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--src-prefix=a/",
            "--dst-prefix=b/",
            base,
            head,
            "--",
        ],
        stdout_as_string=False,
    )
    assert isinstance(raw, bytes)
    patch = PatchSet(raw.decode("utf-8", errors="replace"))
    base_tree, head_tree = repo.commit(base).tree, repo.commit(head).tree
    changes = []
    for pf in patch:
        before_path = None if pf.is_added_file else _strip(pf.source_file)
        after_path = None if pf.is_removed_file else _strip(pf.target_file)
        changes.append(
            FileChange(
                before_path=before_path,
                after_path=after_path,
                before=_blob(base_tree, before_path),
                after=_blob(head_tree, after_path),
                binary=bool(pf.is_binary_file),
            )
        )
    return tuple(changes)


def _strip(diff_path: str) -> str:
    """``a/pkg/mod.py`` -> ``pkg/mod.py`` (the prefixes are set explicitly above)."""
    return diff_path[2:] if diff_path.startswith(("a/", "b/")) else diff_path


def _blob(tree: git.Tree, path: str | None) -> bytes | None:
    if path is None:
        return None
    try:
        item = tree / path
    except KeyError:
        logger.warning("%s is listed in the diff but not in the tree", path)
        return None
    if not isinstance(item, git.Blob):  # a submodule: a commit, not a file
        return None
    data = item.data_stream.read()
    return bytes(data)


def package_context(root: Path, base: str, head: str,
                    before_path: str | None, after_path: str | None,
                    names: Sequence[str] = ()) -> PairContext:
    """Each version's package: the before file's from ``base``, the after file's from ``head``.

    With ``names`` (the changed functions' names), also each revision's test and doc
    files that mention one of them, for calls to try (``veribot.checks.search.harvest``);
    the files the change itself touches come first (a test added with a change calls it
    with the input that shows it). Only files of the two commits are read (never the
    working tree), bounded by the caps of ``veribot.checks.project.package``.
    """
    repo = open_repo(root)
    changed: frozenset[str] = frozenset()
    if names:
        try:
            changed = frozenset(str(repo.git.diff("--name-only", base, head)).splitlines())
        except git.GitCommandError:
            changed = frozenset()
    return PairContext(
        _package_at(repo, base, before_path) if before_path else None,
        _package_at(repo, head, after_path) if after_path else None,
        _tests_at(repo, base, before_path, names, changed) if before_path and names else (),
        _tests_at(repo, head, after_path, names, changed) if after_path and names else (),
    )


_DOC_SUFFIXES = (".rst", ".md", ".txt")


def _tests_at(repo: git.Repo, rev: str, module_path: str, names: Sequence[str],
              changed: frozenset[str] = frozenset()) -> tuple[SourceFile, ...]:
    """Test files (and doc files with doctests) of ``rev`` that mention one of ``names``:
    those the change touches first, then those named after the module, at most
    ``MAX_TEST_FILES`` and ``MAX_TEST_BYTES``."""
    words = [n for n in dict.fromkeys(names) if n.isidentifier()]
    if not words:
        return ()
    patterns = [x for n in words for x in ("-e", n)]
    try:
        out = repo.git.grep("-l", "-w", "-F", "-I", *patterns, rev, "--",
                            "*.py", *(f"*{s}" for s in _DOC_SUFFIXES))
    except git.GitCommandError:  # no match is exit code 1
        return ()
    paths = [line.split(":", 1)[1] for line in str(out).splitlines() if ":" in line]
    paths = [p for p in paths if p != module_path
             and (is_test_path(p) if p.endswith(".py") else p.endswith(_DOC_SUFFIXES))]
    paths.sort(key=lambda p: (not p.endswith(".py"), p not in changed,
                              *harvest.rank(p, module_path)))
    tree = repo.commit(rev).tree
    files: list[SourceFile] = []
    size = 0
    for path in paths:
        if len(files) >= packages.MAX_TEST_FILES:
            break
        try:
            item = tree / path
        except KeyError:
            continue
        if not isinstance(item, git.Blob) or item.mode & 0o170000 == 0o120000:
            continue
        if size + item.size > packages.MAX_TEST_BYTES:
            continue
        try:
            text = bytes(item.data_stream.read()).decode("utf-8")
        except UnicodeDecodeError:
            continue
        if not path.endswith(".py") and ">>>" not in text:
            continue
        files.append(SourceFile(path, text))
        size += item.size
    return tuple(files)


class Revision:
    """The files of one commit, read-only (never the working tree); symbolic links are
    never read (one may point outside the repository). ``testrun.Files``."""

    def __init__(self, repo: git.Repo, rev: str) -> None:
        self.repo, self.rev = repo, rev
        self.tree = repo.commit(rev).tree

    def exists(self, p: str) -> bool:
        try:
            return isinstance(self.tree / p, git.Blob)
        except KeyError:
            return False

    def listing(self, folder: str, recursive: bool) -> list[str]:
        args = ["-r"] if recursive else []
        where = ["--", f"{folder}/"] if folder else []
        out = self.repo.git.ls_tree(*args, "--full-name", "--name-only", "-z", self.rev,
                                    *where)
        return [p for p in str(out).split("\0") if p]

    def read(self, p: str) -> bytes | None:
        try:
            item = self.tree / p
        except KeyError:
            return None
        if not isinstance(item, git.Blob) or item.mode & 0o170000 == 0o120000:
            return None
        return bytes(item.data_stream.read())


def _package_at(repo: git.Repo, rev: str, path: str) -> Package | None:
    files = Revision(repo, rev)
    try:
        return packages.collect(path, files.exists, files.listing, files.read)
    except (git.GitCommandError, ValueError) as exc:
        logger.warning("cannot read the package of %s at %s: %s", path, rev, exc)
        return None


def package_folders(root: Path, revs: Sequence[str]) -> frozenset[str]:
    """The folders holding an ``__init__.py`` at any of ``revs`` (regular packages, whose
    modules an import by name may reach); empty where git cannot list them."""
    try:
        repo = open_repo(root)
        found: set[str] = set()
        for rev in revs:
            out = repo.git.ls_tree("-r", "--full-name", "--name-only", "-z", rev)
            found.update(p.rpartition("/")[0] for p in str(out).split("\0")
                         if p == "__init__.py" or p.endswith("/__init__.py"))
        return frozenset(found)
    except (git.GitCommandError, ValueError, NotARepositoryError) as exc:
        logger.warning("cannot list the packages of %s: %s", root, exc)
        return frozenset()
