// Anchor of the CAF precompiled header that every actor source reuses.
