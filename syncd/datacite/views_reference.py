"""DataCite's vocabularies and ``datacite_list_reference``'s topics (pure data, no request).

The values are DataCite Metadata Schema 4.x vocabularies as the REST API filters spell them
(``resource-type-id`` kebab ids, relation types with their inverses and groups, identifier, date
and contributor types), the ``/repositories`` filter values, the OECD Fields of Science (FOS 2007:
6 areas, 42 fields, with the stored spelling variants), the content-negotiation formats, and the
61 CSL locales DataCite renders distinctly (``tl-PH`` and ``hy-AM`` fall back to APA en-US, so
they are left out). Fixed counts (``../shared/spec/datacite.md`` §2): resource_types 34,
relation_types 39, fields_of_science 48, citation_locales 61, sort_orders 7, identifier_formats 8.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "CITATION_GROUP",
    "FOS_IDS",
    "LOCALES",
    "RELATION_TYPES",
    "RESOURCE_TYPE_IDS",
    "TOPICS",
    "fos_id",
    "fos_labels",
    "locale_of",
    "reference",
]

RESOURCE_TYPE_IDS: tuple[str, ...] = (
    "audiovisual",
    "award",
    "book",
    "book-chapter",
    "collection",
    "computational-notebook",
    "conference-paper",
    "conference-proceeding",
    "data-paper",
    "dataset",
    "dissertation",
    "event",
    "image",
    "instrument",
    "interactive-resource",
    "journal",
    "journal-article",
    "model",
    "other",
    "output-management-plan",
    "peer-review",
    "physical-object",
    "poster",
    "preprint",
    "presentation",
    "project",
    "report",
    "service",
    "software",
    "sound",
    "standard",
    "study-registration",
    "text",
    "workflow",
)
"""The 34 ``resourceTypeGeneral`` values as the ``resource-type-id`` filter spells them."""

_PAIRS: tuple[tuple[str, str, str], ...] = (
    ("HasVersion", "IsVersionOf", "versions"),
    ("IsNewVersionOf", "IsPreviousVersionOf", "versions"),
    ("HasPart", "IsPartOf", "parts"),
    ("Cites", "IsCitedBy", "citations"),
    ("References", "IsReferencedBy", "citations"),
    ("IsSupplementTo", "IsSupplementedBy", "citations"),
    ("IsDerivedFrom", "IsSourceOf", "derivation"),
    ("Documents", "IsDocumentedBy", "documentation"),
    ("Describes", "IsDescribedBy", "documentation"),
    ("HasMetadata", "IsMetadataFor", "documentation"),
    ("Continues", "IsContinuedBy", "other"),
    ("Compiles", "IsCompiledBy", "other"),
    ("IsVariantFormOf", "IsOriginalFormOf", "other"),
    ("Reviews", "IsReviewedBy", "other"),
    ("Requires", "IsRequiredBy", "other"),
    ("Obsoletes", "IsObsoletedBy", "other"),
    ("Collects", "IsCollectedBy", "other"),
    ("HasTranslation", "IsTranslationOf", "other"),
)

RELATION_TYPES: dict[str, tuple[str | None, str]] = {
    **{a: (b, g) for a, b, g in _PAIRS},
    **{b: (a, g) for a, b, g in _PAIRS},
    "IsIdenticalTo": ("IsIdenticalTo", "other"),
    "IsPublishedIn": (None, "other"),
    "Other": (None, "other"),
}
"""Relation type -> (its inverse, its group): 38 schema types plus ``Other``."""

CITATION_GROUP = ("Cites", "IsCitedBy", "References", "IsReferencedBy", "IsSupplementTo", "IsSupplementedBy")
"""The citation family (the relation types Event Data carries)."""

IDENTIFIER_TYPES = (
    "ARK",
    "arXiv",
    "bibcode",
    "CSTR",
    "DOI",
    "EAN13",
    "EISSN",
    "Handle",
    "IGSN",
    "ISBN",
    "ISSN",
    "ISTC",
    "LISSN",
    "LSID",
    "PMID",
    "PURL",
    "RAiD",
    "RRID",
    "SWHID",
    "UPC",
    "URL",
    "URN",
    "w3id",
)
DATE_TYPES = (
    "Accepted",
    "Available",
    "Collected",
    "Copyrighted",
    "Coverage",
    "Created",
    "Issued",
    "Other",
    "Submitted",
    "Updated",
    "Valid",
    "Withdrawn",
)
CONTRIBUTOR_TYPES = (
    "ContactPerson",
    "DataCollector",
    "DataCurator",
    "DataManager",
    "Distributor",
    "Editor",
    "HostingInstitution",
    "Other",
    "Producer",
    "ProjectLeader",
    "ProjectManager",
    "ProjectMember",
    "RegistrationAgency",
    "RegistrationAuthority",
    "RelatedPerson",
    "Researcher",
    "ResearchGroup",
    "RightsHolder",
    "Sponsor",
    "Supervisor",
    "Translator",
    "WorkPackageLeader",
)
REPOSITORY_TYPES = (
    "institutional",
    "disciplinary",
    "multidisciplinary",
    "project-related",
    "governmental",
    "other",
)
CERTIFICATES = ("CoreTrustSeal", "WDS", "DSA", "DINI", "RatSWD", "CLARIN", "DIN 31644")
CLIENT_TYPES = {
    "repository": "Repository",
    "periodical": "Periodical",
    "igsnCatalog": "IGSN ID Catalog",
    "raidRegistry": "RAiD Registry",
}
SOFTWARE = {
    "dataverse": "Dataverse",
    "dspace": "DSpace",
    "invenio": "Invenio",
    "ckan": "CKAN",
    "eprints": "EPrints",
    "opus": "OPUS",
    "pure": "Pure",
    "figshare": "Figshare",
    "islandora": "Islandora",
    "fedora": "Fedora",
    "samvera": "Samvera",
    "mycore": "MyCoRe",
    "open_journal_systems_ojs": "Open Journal Systems (OJS)",
    "other": "Other",
}
LICENSES = {
    "cc-by-4.0": "Creative Commons Attribution 4.0",
    "cc0-1.0": "Creative Commons Zero 1.0 (public domain dedication)",
    "cc-by-nc-4.0": "Creative Commons Attribution-NonCommercial 4.0",
    "cc-by-sa-4.0": "Creative Commons Attribution-ShareAlike 4.0",
    "cc-by-nc-sa-4.0": "Creative Commons Attribution-NonCommercial-ShareAlike 4.0",
    "cc-by-nc-nd-4.0": "Creative Commons Attribution-NonCommercial-NoDerivatives 4.0",
    "cc-by-nd-4.0": "Creative Commons Attribution-NoDerivatives 4.0",
    "cc-by-3.0": "Creative Commons Attribution 3.0",
    "mit": "MIT License",
    "apache-2.0": "Apache License 2.0",
    "bsd-3-clause": "BSD 3-Clause License",
    "odbl-1.0": "Open Data Commons Open Database License 1.0",
    "notspecified": "DataCite: no license specified",
    "pdm": "DataCite: Public Domain Mark",
}

_FOS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("1", "Natural sciences", ()),
    ("1.1", "Mathematics", ()),
    ("1.2", "Computer and information sciences", ()),
    ("1.3", "Physical sciences", ()),
    ("1.4", "Chemical sciences", ()),
    ("1.5", "Earth and related environmental sciences", ()),
    ("1.6", "Biological sciences", ()),
    ("1.7", "Other natural sciences", ()),
    ("2", "Engineering and technology", ()),
    ("2.1", "Civil engineering", ()),
    ("2.2", "Electrical engineering, electronic engineering, information engineering", ()),
    ("2.3", "Mechanical engineering", ()),
    ("2.4", "Chemical engineering", ()),
    ("2.5", "Materials engineering", ()),
    ("2.6", "Medical engineering", ()),
    ("2.7", "Environmental engineering", ()),
    ("2.8", "Environmental biotechnology", ()),
    ("2.9", "Industrial biotechnology", ()),
    ("2.10", "Nanotechnology", ("Nano-technology",)),
    ("2.11", "Other engineering and technologies", ()),
    ("3", "Medical and health sciences", ()),
    ("3.1", "Basic medicine", ()),
    ("3.2", "Clinical medicine", ()),
    ("3.3", "Health sciences", ()),
    ("3.4", "Medical biotechnology", ()),
    ("3.5", "Other medical sciences", ()),
    ("4", "Agricultural sciences", ()),
    ("4.1", "Agriculture, forestry, and fisheries", ()),
    ("4.2", "Animal and dairy science", ()),
    ("4.3", "Veterinary science", ()),
    ("4.4", "Agricultural biotechnology", ()),
    ("4.5", "Other agricultural sciences", ()),
    ("5", "Social sciences", ()),
    ("5.1", "Psychology", ()),
    ("5.2", "Economics and business", ()),
    ("5.3", "Educational sciences", ()),
    ("5.4", "Sociology", ()),
    ("5.5", "Law", ()),
    ("5.6", "Political science", ()),
    ("5.7", "Social and economic geography", ()),
    ("5.8", "Media and communications", ()),
    ("5.9", "Other social sciences", ()),
    ("6", "Humanities", ()),
    ("6.1", "History and archaeology", ()),
    ("6.2", "Languages and literature", ()),
    ("6.3", "Philosophy, ethics and religion", ()),
    ("6.4", "Arts (arts, history of arts, performing arts, music)", ()),
    ("6.5", "Other humanities", ()),
)


_AREAS = {code: label for code, label, _ in _FOS if "." not in code}


def _fos_key(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", label.lower()).strip("_")


FOS_IDS: tuple[str, ...] = tuple(_fos_key(label) for _, label, _ in _FOS)
"""The 48 field-of-science ids (6 areas and 42 fields), e.g. ``earth_and_related_environmental_sciences``."""
_FOS_BY_ID = {_fos_key(label): (code, label, variants) for code, label, variants in _FOS}
_FOS_ALIASES = {
    re.sub(r"[^a-z0-9]+", "", name.lower()): _fos_key(label)
    for _, label, variants in _FOS
    for name in (label, *variants, _fos_key(label))
}


def fos_id(value: str) -> str | None:
    """The field-of-science id of an id, a label (``FOS:`` prefix accepted) or a variant, or None."""
    bare = re.sub(r"^\s*fos\s*:\s*", "", value, flags=re.IGNORECASE)
    return _FOS_ALIASES.get(re.sub(r"[^a-z0-9]+", "", bare.lower()))


def fos_labels(ident: str) -> list[str]:
    """The stored labels a field of science is searched under: ``FOS: <label>`` and each variant."""
    _, label, variants = _FOS_BY_ID[ident]
    return [f"FOS: {v}" for v in (label, *variants)]


_LOCALES = [
    "af-ZA",
    "ar",
    "bal-PK",
    "bg-BG",
    "brh-PK",
    "ca-AD",
    "cs-CZ",
    "cy-GB",
    "da-DK",
    "de-AT",
    "de-CH",
    "de-DE",
    "el-GR",
    "en-GB",
    "en-US",
    "es-CL",
    "es-ES",
    "es-MX",
    "et-EE",
    "eu",
    "fa-IR",
    "fi-FI",
    "fr-CA",
    "fr-FR",
    "gl-ES",
    "he-IL",
    "hi-IN",
    "hr-HR",
    "hu-HU",
    "id-ID",
    "is-IS",
    "it-IT",
    "ja-JP",
    "km-KH",
    "ko-KR",
    "la",
    "lij-IT",
    "lt-LT",
    "lv-LV",
    "mn-MN",
    "ms-MY",
    "nb-NO",
    "nl-NL",
    "nn-NO",
    "pa-PK",
    "pl-PL",
    "pt-BR",
    "pt-PT",
    "ro-RO",
    "ru-RU",
    "sk-SK",
    "sl-SI",
    "sr-Cyrl-RS",
    "sr-Latn-RS",
    "sv-SE",
    "th-TH",
    "tr-TR",
    "uk-UA",
    "vi-VN",
    "zh-CN",
    "zh-TW",
]
LOCALES: tuple[str, ...] = tuple(_LOCALES)
"""The 61 CSL locales DataCite renders distinctly."""
_PRIMARY = {
    "de": "de-DE",
    "en": "en-US",
    "es": "es-ES",
    "fr": "fr-FR",
    "pt": "pt-PT",
    "sr": "sr-Latn-RS",
    "zh": "zh-CN",
}
_BY_KEY = {
    **{loc.split("-")[0].lower(): loc for loc in reversed(LOCALES)},
    **_PRIMARY,
    **{loc.lower(): loc for loc in LOCALES},
}


def locale_of(value: str) -> str | None:
    """The CSL locale of ``value`` in any case (``_`` for ``-``; a bare language: its primary dialect)."""
    return _BY_KEY.get(value.strip().replace("_", "-").lower())


SORT_ORDERS = {
    "relevance": "relevance",
    "newest": "-created",
    "oldest": "created",
    "recently_updated": "-updated",
    "most_cited": "-citation-count",
    "most_viewed": "-view-count",
    "most_downloaded": "-download-count",
}
FORMATS = {
    "text": ("text/x-bibliography", "Formatted citation (CSL style + locale)"),
    "csl_json": ("application/vnd.citationstyles.csl+json", "CSL JSON"),
    "bibtex": ("application/x-bibtex", "BibTeX"),
    "ris": ("application/x-research-info-systems", "RIS"),
    "datacite_json": ("application/vnd.datacite.datacite+json", "DataCite JSON"),
    "datacite_xml": ("application/vnd.datacite.datacite+xml", "DataCite XML"),
    "schema_org": ("application/vnd.schemaorg.ld+json", "Schema.org JSON-LD"),
    "codemeta": ("application/vnd.codemeta.ld+json", "Codemeta JSON-LD"),
    "jats": ("application/vnd.jats+xml", "JATS XML"),
}
STYLES = (
    "apa",
    "modern-language-association",
    "chicago-author-date",
    "ieee",
    "vancouver",
    "harvard-cite-them-right",
    "nature",
    "science",
    "cell",
    "plos",
    "american-medical-association",
    "american-chemical-society",
    "bmj",
)

Entry = dict[str, Any]


def _e(value: str, label: str | None = None, **extra: Any) -> Entry:
    out: Entry = {"value": value}
    if label:
        out["label"] = label
    out.update({k: v for k, v in extra.items() if v is not None})
    return out


def _pascal(kebab: str) -> str:
    return "".join(p.capitalize() for p in kebab.split("-"))


_IDENTIFIER_FORMATS = (
    _e("DOI", "10.5061/dryad.234", description="bare, doi: or info:doi/ prefix, doi.org URL; any case"),
    _e(
        "ORCID",
        "0000-0002-1825-0097",
        description="16 digits, hyphens optional, orcid.org URL; checksum verified",
    ),
    _e("ROR", "021nxhr62", description="bare id, ror.org/ or https://ror.org/ URL"),
    _e(
        "Crossref Funder ID",
        "10.13039/100000001",
        description="10.13039/<digits>, its doi.org URL, or digits",
    ),
    _e("country", "CH", description="ISO 3166-1 alpha-2, any case"),
    _e("language", "en", description="ISO 639-1, any case"),
    _e("repository id", "dryad.dryad", description="provider.repository, any case"),
    _e("provider id", "dryad", description="letters, digits and hyphens, any case"),
)

TOPICS: dict[str, tuple[str, tuple[Entry, ...], tuple[str, ...]]] = {
    "resource_types": (
        "Resource types (resourceTypeGeneral)",
        tuple(_e(v, _pascal(v)) for v in RESOURCE_TYPE_IDS),
        ("Filter with resource_types (kebab ids; PascalCase accepted).",),
    ),
    "relation_types": (
        "Relation types",
        tuple(_e(k, group=g, inverse=inv) for k, (inv, g) in RELATION_TYPES.items()),
        (
            "IsPublishedIn and Other have no inverse; IsIdenticalTo is its own.",
            "Other is not a schema value.",
        ),
    ),
    "identifier_types": ("Related identifier types", tuple(_e(v) for v in IDENTIFIER_TYPES), ()),
    "date_types": ("Date types", tuple(_e(v) for v in DATE_TYPES), ()),
    "contributor_types": ("Contributor types", tuple(_e(v) for v in CONTRIBUTOR_TYPES), ()),
    "fields_of_science": (
        "OECD Fields of Science and Technology (FOS 2007)",
        tuple(
            _e(_fos_key(label), label, group=_AREAS[code.split(".")[0]], description=f"code {code}")
            for code, label, _ in _FOS
        ),
        ("Stored as subjects 'FOS: <label>'; search with fields_of_science.",),
    ),
    "licenses": (
        "Common licence ids",
        tuple(_e(k, v) for k, v in LICENSES.items()),
        ("Open vocabulary: DataCite matches the lower-case SPDX id exactly.",),
    ),
    "repository_types": ("Repository types", tuple(_e(v) for v in REPOSITORY_TYPES), ()),
    "certificates": ("Repository certificates", tuple(_e(v) for v in CERTIFICATES), ()),
    "software_platforms": (
        "Repository software",
        tuple(_e(k, v) for k, v in SOFTWARE.items()),
        ("Free-form slugs; these are the common ones.",),
    ),
    "client_types": ("Client types", tuple(_e(k, v) for k, v in CLIENT_TYPES.items()), ()),
    "sort_orders": ("Work search sort orders", tuple(_e(k, f"sort={v}") for k, v in SORT_ORDERS.items()), ()),
    "query_syntax": (
        "Query syntax (query parameter)",
        (
            _e("titles.title:glacier", description="a word in a field"),
            _e('titles.title:"mass balance"', description="a phrase in a field"),
            _e("publicationYear:[2010 TO 2020]", description="a range"),
            _e("glacier AND NOT ice", description="AND, OR, NOT in capitals"),
            _e("creators.name:Zanne*", description="a wildcard"),
        ),
        (
            "A word: is read as a field name; put plain words in text.",
            "Reserved characters need a backslash.",
        ),
    ),
    "citation_formats": (
        "Citation formats",
        tuple(_e(k, v[1], description=v[0]) for k, v in FORMATS.items()),
        (),
    ),
    "citation_styles": (
        "CSL styles",
        tuple(_e(v) for v in STYLES),
        ("Any CSL style id is accepted; an unknown one is answered unsupported_style.",),
    ),
    "citation_locales": (
        "CSL locales",
        tuple(_e(v) for v in LOCALES),
        (
            "A bare language selects its primary dialect.",
            "CSL's tl-PH and hy-AM are not listed and are rejected (unsupported_locale), as are tl and hy: "
            "DataCite renders them as APA en-US.",
        ),
    ),
    "identifier_formats": ("Identifier forms accepted", _IDENTIFIER_FORMATS, ()),
    "coverage": (
        "What syncd reads from DataCite",
        (
            _e(
                "works",
                description="GET /dois (records, searches), stored as datacite_work / datacite_search",
            ),
            _e(
                "citations",
                description="GET /dois/{mime}/{doi}; offline, rendered locally from a stored record",
            ),
            _e("repositories", description="GET /repositories"),
            _e("events", description="GET /events (Event Data)"),
        ),
        ("Counts (citations, views) trail the live record.", "Metadata is CC0 (DataCite's metadata waiver)."),
    ),
}
"""Topic -> (title, entries, notes) of ``datacite_list_reference``."""


def reference(topic: str) -> dict[str, Any]:
    """``datacite_list_reference``'s structured content for ``topic`` (a key of :data:`TOPICS`).

    Raises:
        KeyError: ``topic`` is not a topic (the input schema refuses it first).
    """
    title, entries, notes = TOPICS[topic]
    return {"topic": topic, "title": title, "entries": [dict(e) for e in entries], "notes": list(notes)}
