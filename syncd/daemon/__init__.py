"""``syncd daemon``: start-up, the HTTP endpoint and its guards, the scheduled jobs, alerts."""
