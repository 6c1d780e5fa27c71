"""Review: a scope's pending proposals, and the commits that decide them.

A proposal is a `propose` commit whose rows no read sees (`LogTransaction._write`
gives them an empty validity). `approve` writes what it proposed as a commit of
its own, `reject` records the decision and changes no item; both name the
proposal they decide (`target`), and a decision is final.
"""

from __future__ import annotations

from langgraph_chronomem.engine.core import TransactionCore
from langgraph_chronomem.engine.rows import _NewRow, _Row, scope_text
from langgraph_chronomem.engine.types import Commit, CommitMeta, Namespace
from langgraph_chronomem.errors import VersionError, WriteConflictError

__all__ = ["ProposalOps"]


class ProposalOps(TransactionCore):
    """The review operations of a transaction: list, approve, reject.

    A mixin for `LogTransaction`, whose reads and `_commit` these methods use.
    """

    def proposals(self, scope: Namespace) -> list[Commit]:
        """The scope's pending proposals, oldest first: its `propose` commits
        that no approve or reject has decided."""
        pending = self.cur.execute(self.sql.PENDING, (scope_text(scope),)).fetchall()
        return [self.log(scope, version=row[0])[0] for row in pending]

    def _check_pending(self, scope: Namespace, version: int) -> None:
        """Raise unless `version` is a proposal no one has decided yet."""
        self.check_version(scope, version, allow_zero=False)
        if self._op_of(scope, version) != "propose":
            raise VersionError(
                f"v{version} is not a proposal; the pending ones are "
                + (", ".join(f"v{c.version}" for c in self.proposals(scope)) or "none")
            )
        decided = self.cur.execute(
            self.sql.DECISION, (scope_text(scope), version)
        ).fetchone()
        if decided is not None:
            op, by = decided
            done, undo = (
                ("approved", f"revert v{by}")
                if op == "approve"
                else ("rejected", "write it again")
            )
            raise VersionError(
                f"v{version} was already {done} in v{by}; a decision is final "
                f"({undo} to change your mind)"
            )

    def approve(
        self, scope: Namespace, version: int, meta: CommitMeta, *, force: bool = False
    ) -> Commit:
        """Write what proposal `version` proposed, as one `approve` commit.

        An item changed at HEAD since the proposal was made (its live row is
        no longer the one the proposal would replace) is a conflict: nothing
        is written unless `force`, which overwrites that change.

        Raises:
            VersionNotFound: If the scope has no such version.
            VersionError: If it is not a pending proposal, or a proposed
                value was erased (`redact`): reject it then.
            WriteConflictError: For a conflict, without `force`.
        """
        self._check_pending(scope, version)
        ids = self.row_ids_of(scope, version)
        rows = self._rows_by_id(ids)
        replaces = {row_id: prev_id for row_id, _, prev_id in self.row_links(ids)}
        writes, conflicts = [], []
        for row_id in ids:
            row = rows[row_id]
            path = f"{row.namespace.replace('.', '/')}/{row.key}"
            if row.erased is not None:
                raise VersionError(
                    f"v{version}'s value for {path} was {row.erased}: there is "
                    "nothing left to approve; reject it"
                )
            live = self.cur.execute(
                self.sql.LIVE_ROW, (row.namespace, row.key)
            ).fetchone()
            if (None if live is None else live[0]) != replaces[row_id]:
                conflicts.append(self._changed_since(path, row, version))
            writes.append(
                _NewRow(
                    row.namespace,
                    row.key,
                    row.value,
                    row.ttl_minutes,
                    index_fields=row.index_fields,
                )
            )
        if conflicts and not force:
            raise WriteConflictError(
                f"cannot approve v{version}: {'; '.join(conflicts)}; approve "
                "anyway with force=True (overwrites that change) or reject it"
            )
        commit = self._commit(scope, "approve", writes, meta, target=version)
        assert commit is not None  # COMMITS_EVEN_EMPTY
        return commit

    def _changed_since(self, path: str, row: _Row, version: int) -> str:
        """Which commits changed a proposal's item after it, and who made them."""
        later = self.cur.execute(
            self.sql.LATER_WRITES, (row.namespace, row.key, version)
        ).fetchall()
        return f"{path} was changed since in " + ", ".join(
            f"v{v} by {who or 'an unnamed writer'}" for v, who in later
        )

    def reject(self, scope: Namespace, version: int, meta: CommitMeta) -> Commit:
        """Decide proposal `version` against, as one `reject` commit that
        changes no item; the proposal stays in the history.

        Raises:
            VersionNotFound: If the scope has no such version.
            VersionError: If it is not a pending proposal.
        """
        self._check_pending(scope, version)
        commit = self._commit(scope, "reject", [], meta, target=version)
        assert commit is not None  # COMMITS_EVEN_EMPTY
        return commit
