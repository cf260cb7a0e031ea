"""sandboxes."""
