"""Reading what is taken in, without writing the database: manifests, archives, audio decoding and
signal checks, listening-form item rows. The services that write what these read are
annotation.services.corpus_import (a corpus), corpus_import_jobs (an admin upload, in the
background) and form_items_import (a listening-form study); evaluation/ingest reads the same way."""
