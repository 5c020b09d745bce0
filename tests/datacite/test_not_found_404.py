"""Issue 42 item 5: a DataCite 404 is DataCite answering ``not_found``, never "DataCite unreachable".

The 404 body is DataCite's recorded one (``error/dois_10.4124_..._1_404.json``:
``{"errors":[{"status":"404","title":"The resource you are looking for doesn't exist."}]}``).
"""

from __future__ import annotations

from typing import Any

from syncd.datacite.args import SearchRepositoriesArgs, SearchWorksArgs
from syncd.datacite.tools import get_work, search_repositories, search_works
from syncd.road.services import Services
from tests.datacite.upstream import Recorded, recorded_json

NOT_FOUND = recorded_json("error/dois_10.4124_05f6c379-dd68-4cdb-880d-33d3e9576d52_1_404.json")


def _error(structured: dict[str, Any] | None) -> dict[str, Any]:
    assert structured is not None and "error" in structured, structured
    error: dict[str, Any] = structured["error"]
    return error


def test_search_works_404_is_not_found_not_the_offline_answer(dc: Services, upstream: Recorded) -> None:
    """/dois answering DataCite's recorded 404: datacite_search_works fails not_found (data.status 404,
    not retryable), with no "unreachable" wording and no local answer, although the stored Dryad
    malaria dataset matches the words (the offline index answers only when DataCite cannot be asked).
    """
    upstream.add_work("10.5061/dryad.8515")
    get_work(dc, "10.5061/dryad.8515")
    upstream.add_list(
        lambda path, q: path == "/dois" and q.get("query") == "(malaria hominids)", NOT_FOUND, 404
    )
    result = search_works(dc, SearchWorksArgs.model_validate({"text": "malaria hominids"}).arguments())
    error = _error(result.structured_content)
    assert error["data"]["reason"] == "not_found"
    assert error["data"]["status"] == 404 and error["data"]["retryable"] is False
    assert "404" in error["message"] and "unreachable" not in error["message"].lower()
    assert "unreachable" not in error["data"]["recovery"]["hint"].lower()
    assert sum(1 for host, path, _ in upstream.calls if path == "/dois") == 2  # the record, the search


def test_search_repositories_404_is_not_found(dc: Services, upstream: Recorded) -> None:
    """/repositories answering DataCite's recorded 404: datacite_search_repositories fails not_found,
    asked once (a 404 is an answer: no retry), not upstream_unavailable.
    """
    upstream.add_list(lambda path, q: path == "/repositories", NOT_FOUND, 404)
    args = SearchRepositoriesArgs.model_validate({"query": "glacier"}).arguments()
    error = _error(search_repositories(dc, args).structured_content)
    assert error["data"]["reason"] == "not_found"
    assert [path for _, path, _ in upstream.calls] == ["/repositories"]
