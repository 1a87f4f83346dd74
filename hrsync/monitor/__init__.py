"""What the daemon tells the world about itself: metrics, HTTP endpoints, the webhook."""
