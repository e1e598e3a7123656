"""What a run database says: reports (json, md, csv), aggregates, export and the CI gate."""
