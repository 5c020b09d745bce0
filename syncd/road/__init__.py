"""The local-first road: the policy's decisions, the runner, revalidation and the services bundle."""
