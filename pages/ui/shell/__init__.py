"""What every page shares: session state and services, sidebar, navigation, sign-in, the error card, the last call, feedback, rendering."""
