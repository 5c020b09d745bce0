"""The base-URL checks are the slices' probes, handed down by the registry (none named by the check)."""

from __future__ import annotations

from typing import Any

from syncd.config import Settings
from syncd.registry import CLIENTS, POOLS, PROBES
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.upstream.probe import Probe
from tests.fakeupstream import FakeUpstream


def test_each_probe_is_declared_beside_its_slices_client() -> None:
    """registry.PROBES: Crossref's, Zenodo's, doi.org's and DataCite's, each from its slice's
    ``client_probe.py``, each naming a client the registry opens and a declared pool.
    """
    assert [(p.service, p.pool, p.path, dict(p.params)) for p in PROBES] == [
        ("crossref", "crossref_list", "/works", {"rows": "0"}),
        ("zenodo", "zenodo_search", "/records", {"size": "1"}),
        ("doi", "doi", "/ra/10.1000", {}),
        ("datacite", "datacite", "/dois", {"page[size]": "1"}),
    ]
    assert [p.own_shape.__module__ for p in PROBES] == [
        "syncd.crossref.client_probe",
        "syncd.zenodo.client_probe",
        "syncd.doiorg.client_probe",
        "syncd.datacite.client_probe",
    ]
    assert all(p.service in CLIENTS and p.pool in POOLS for p in PROBES)


def test_the_bundle_runs_the_probes_it_was_handed(fake: FakeUpstream, settings: Settings) -> None:
    """A bundle handed one doi.org probe asks doi.org once (its recorded ``/ra/10.1000`` answer passes);
    the same request judged by a shape it does not have fails as unexpected_answer with the
    ``doi.base_url`` hint; a bundle handed none checks nothing.
    """

    def never(body: Any) -> bool:
        return False

    doi = next(p for p in PROBES if p.service == "doi")
    store = Store.open(settings.database_url)
    try:
        bundles = [
            Services.open(settings, store, clients=CLIENTS, pools=POOLS, probes=probes)
            for probes in ((doi,), (Probe("doi", "doi", "/ra/10.1000", never),), ())
        ]
        try:
            before = fake.count()
            passed, failed, nothing = (b.upstreams.check(settings) for b in bundles)
            assert [(c.service, c.ok, c.status) for c in passed] == [("doi", True, 200)]
            assert [(c.service, c.ok, c.reason) for c in failed] == [("doi", False, "unexpected_answer")]
            assert failed[0].hint is not None and failed[0].hint.startswith("doi.base_url may be wrong")
            assert nothing == []
            assert fake.count() == before + 2
        finally:
            for b in bundles:
                b.close()
    finally:
        store.close()
