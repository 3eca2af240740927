"""The ground floor: what every layer above may use and which imports nothing of rankflavor but
:mod:`rankflavor.errors` (threads and cores, progress, memory pages, input provenance, non-finite numbers,
the registry of notebook views and the DataFrame views of result objects)."""
