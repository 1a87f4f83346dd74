"""People to teams (pure): the mapping strategies, held people, stand-in leads, identities."""
