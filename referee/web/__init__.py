"""``marias serve`` and ``marias report``: the web pages over the folders marias writes."""
